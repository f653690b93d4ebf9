// The common shape of every HTTP stream of the client: the request starts at once, events are read
// once (iterate, or call a final-object helper that drains the rest), and abort() drops the
// connection. Each endpoint family supplies the event decoder and the accumulator.
import { followAbort } from "./abort-link.ts";
import { SvcAbortError, SvcProtocolError, SvcStreamCutError } from "./errors.ts";
import type { CallOptions, Exchange } from "./http.ts";
import { readSse, type SseEvent, SseTruncatedError } from "./sse.ts";

export interface Accumulator<E, F> {
  add(event: E): void;
  result(): F;
}

export class EventStream<E, F> implements AsyncIterable<E> {
  private readonly controller = new AbortController();
  private readonly exchange: Promise<Exchange>;
  private iterator: AsyncGenerator<E> | undefined;
  private ended = false;
  private readonly decode: (ex: Exchange) => AsyncIterable<E>;
  private readonly acc: Accumulator<E, F>;
  private ex: Exchange | undefined;
  /** Takes this stream's listener off the caller's signal (which may outlive it: a call's). */
  private readonly unlink: () => void;

  constructor(
    open: (opts: CallOptions) => Promise<Exchange>,
    decode: (ex: Exchange) => AsyncIterable<E>,
    acc: Accumulator<E, F>,
    opts: CallOptions = {},
  ) {
    this.decode = decode;
    this.acc = acc;
    this.unlink = followAbort(opts.signal, this.controller);
    this.exchange = open({ ...opts, signal: this.controller.signal });
    // Failures surface when the stream is read; keep an unread failure from being "unhandled".
    this.exchange.catch(() => this.unlink());
  }

  /** Request id of the answer (after it has arrived). */
  get requestId(): string | undefined {
    return this.ex?.requestId;
  }

  /** True once the stream reached its final event. */
  get done(): boolean {
    return this.ended;
  }

  /** Drop the connection now; a pending or later read rejects with SvcAbortError. */
  abort(): void {
    this.controller.abort(new SvcAbortError("stream aborted"));
    this.unlink();
  }

  [Symbol.asyncIterator](): AsyncGenerator<E> {
    this.iterator ??= this.run();
    return this.iterator;
  }

  /** Read the rest of the stream and return what it accumulated. */
  protected async drain(): Promise<F> {
    for await (const _ of this) {
      // accumulation happens in run()
    }
    if (!this.ended) throw new SvcAbortError("stream was closed before its end");
    return this.acc.result();
  }

  private async *run(): AsyncGenerator<E> {
    try {
      const ex = await this.exchange;
      this.ex = ex;
      try {
        for await (const ev of this.decode(ex)) {
          this.acc.add(ev);
          yield ev;
        }
        this.ended = true;
      } finally {
        if (!this.ended) await ex.cancel();
      }
    } finally {
      this.unlink();
    }
  }
}

/** SSE events of an answer; a cut inside an event becomes SvcStreamCutError. */
export async function* sseEvents(ex: Exchange, what: string): AsyncGenerator<SseEvent> {
  try {
    yield* readSse(ex.chunks());
  } catch (e) {
    if (e instanceof SseTruncatedError) {
      throw new SvcStreamCutError(`${what}: stream cut in the middle of an event`, {
        requestId: ex.requestId,
        cause: e,
      });
    }
    throw e;
  }
}

export function parseData<T>(ev: SseEvent, what: string, requestId: string | undefined): T {
  try {
    return JSON.parse(ev.data) as T;
  } catch (e) {
    throw new SvcProtocolError(`${what}: event data is not JSON: ${ev.data.slice(0, 80)}`, {
      requestId,
      cause: e,
    });
  }
}

export function streamEndedEarly(
  what: string,
  requestId: string | undefined,
  expected: string,
): SvcStreamCutError {
  return new SvcStreamCutError(`${what}: stream ended before ${expected}`, { requestId });
}
