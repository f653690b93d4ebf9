// Server side of server-sent events: takes the raw response over from fastify, writes frames with
// backpressure (a slow reader pauses the producer instead of growing memory), and turns the client
// going away into an AbortSignal the generation can stop on. With `notBefore` nothing leaves, the
// status line and headers included, until that promise settles: what is written meanwhile waits,
// in order, and the writer's callers wait with it (a hosted service's timing, conditions/latency.ts).
import type { ServerResponse } from "node:http";
import type { FastifyReply } from "fastify";

/** `event: <name>` + `data: <json>` frame (messages and responses formats). */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** `data: <json>` frame without an event name (chat completions format). */
export function sseData(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

export interface SseWriterOptions {
  headers?: Record<string, string>;
  /** Hold everything until this settles. */
  notBefore?: Promise<void> | undefined;
}

export class SseWriter {
  private readonly raw: ServerResponse;
  private readonly abort = new AbortController();
  /** Aborted when the client disconnects before the stream ended. */
  readonly signal: AbortSignal = this.abort.signal;
  private ended = false;
  /** What was written while held (undefined once released), and whether end() came meanwhile. */
  private held: string[] | undefined;
  private endHeld = false;
  private released: Promise<void> | undefined;

  constructor(reply: FastifyReply, { headers = {}, notBefore }: SseWriterOptions = {}) {
    reply.hijack();
    this.raw = reply.raw;
    // No `connection` header: node answers the client's own. Forcing keep-alive on a request that
    // said `Connection: close` (the bridge's E6 uploads) kept a socket whose parser refuses
    // anything more, so a proxy that reused it got a 400 for the next request, often a chat.
    this.raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      ...headers,
    });
    this.raw.on("close", () => {
      if (!this.ended || this.held) this.abort.abort(new Error("client disconnected"));
    });
    if (notBefore) {
      this.held = [];
      this.released = notBefore.then(() => this.release());
    }
  }

  private release(): void {
    const texts = this.held ?? [];
    this.held = undefined;
    if (this.raw.destroyed || this.signal.aborted) return;
    const text = texts.join("");
    if (this.endHeld) this.raw.end(text);
    else if (text) this.raw.write(text);
  }

  get closed(): boolean {
    return this.ended || this.signal.aborted;
  }

  /** Writes text; resolves at once unless the socket buffer is full, then on 'drain' (or close). */
  write(text: string): Promise<void> | undefined {
    if (this.closed || text.length === 0) return undefined;
    if (this.held) {
      this.held.push(text);
      return this.released;
    }
    if (this.raw.write(text)) return undefined;
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off("drain", done);
        this.raw.off("close", done);
        resolve();
      };
      this.raw.on("drain", done);
      this.raw.on("close", done);
    });
  }

  end(text = ""): void {
    if (this.ended) return;
    this.ended = true;
    if (this.held) {
      this.held.push(text);
      this.endHeld = true;
    } else if (!this.raw.destroyed) this.raw.end(text);
  }
}
