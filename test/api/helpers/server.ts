// A small scriptable server speaking the spec's wire shapes over real HTTP and WebSocket, for the
// client tests. Each test installs handlers per "METHOD /path"; a list of handlers is used in
// order, the last one repeating (so "503 once, then 200" is [fail, ok]). Every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { SvcClient } from "../../../src/api/client.ts";

export interface Recorded {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  body: Buffer;
  /** Parsed JSON body, when the body was JSON. */
  json: unknown;
}

export type Handler = (req: Recorded, res: ServerResponse) => void | Promise<void>;
export type WsHandler = (ws: WebSocket, req: IncomingMessage) => void;

export interface TestServer {
  url: string;
  wsUrl: string;
  requests: Recorded[];
  on(route: string, ...handlers: Handler[]): void;
  onWs(path: string, handler: WsHandler): void;
  /** Reject WebSocket handshakes on this path with the status and body. */
  rejectWs(path: string, status: number, body: string): void;
  close(): Promise<void>;
}

export async function startServer(): Promise<TestServer> {
  const routes = new Map<string, { handlers: Handler[]; calls: number }>();
  const wsRoutes = new Map<string, WsHandler>();
  const wsRejects = new Map<string, { status: number; body: string }>();
  const requests: Recorded[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const u = new URL(req.url ?? "/", "http://x");
    let json: unknown;
    if (String(req.headers["content-type"] ?? "").startsWith("application/json")) {
      try {
        json = JSON.parse(body.toString("utf8"));
      } catch {
        json = undefined;
      }
    }
    const rec: Recorded = {
      method: req.method ?? "",
      path: u.pathname,
      query: u.searchParams,
      headers: req.headers,
      body,
      json,
    };
    requests.push(rec);
    const route = routes.get(`${rec.method} ${rec.path}`);
    if (!route)
      return sendJson(res, 404, {
        error: { message: `no route ${rec.method} ${rec.path}`, type: "not_found_error" },
      });
    const h = route.handlers[Math.min(route.calls++, route.handlers.length - 1)]!;
    try {
      await h(rec, res);
    } catch (e) {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(e), type: "api_error" } });
      else res.destroy();
    }
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const reject = wsRejects.get(path);
    if (reject) {
      socket.end(
        `HTTP/1.1 ${reject.status} Rejected\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(reject.body)}\r\nconnection: close\r\n\r\n${reject.body}`,
      );
      return;
    }
    const h = wsRoutes.get(path);
    if (!h) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => h(ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    requests,
    on(route, ...handlers) {
      routes.set(route, { handlers, calls: 0 });
    },
    onWs(path, handler) {
      wsRoutes.set(path, handler);
    },
    rejectWs(path, status, body) {
      wsRejects.set(path, { status, body });
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---- response helpers ----

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "x-request-id": "req_test", ...headers });
  res.end(text);
}

export function sendHtml(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html", ...headers });
  res.end(
    `<html><head><title>${status} Bad Gateway</title></head><body><h1>upstream down</h1></body></html>`,
  );
}

export interface SseFrame {
  event?: string;
  data: unknown;
}

/** Serialize SSE frames the way the spec shows them (`event:` line when named, one `data:` line). */
export function sseText(frames: readonly SseFrame[]): string {
  return frames
    .map(
      (f) =>
        `${f.event ? `event: ${f.event}\n` : ""}data: ${typeof f.data === "string" ? f.data : JSON.stringify(f.data)}\n\n`,
    )
    .join("");
}

/**
 * Stream frames as SSE, one write per frame (a tick apart so they arrive as separate chunks).
 * `cutAfterBytes` destroys the socket after that many bytes, mid-event if it falls there.
 */
export async function sendSse(
  res: ServerResponse,
  frames: readonly SseFrame[],
  opts: { cutAfterBytes?: number } = {},
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "x-request-id": "req_sse",
  });
  const text = Buffer.from(sseText(frames));
  if (opts.cutAfterBytes !== undefined) {
    // Cut once those bytes are out (with the kernel): they reach the client before the cut does.
    await new Promise((r) => res.write(text.subarray(0, opts.cutAfterBytes), r));
    res.destroy();
    return;
  }
  for (const f of frames) {
    res.write(sseText([f]));
    await new Promise((r) => setImmediate(r));
  }
  res.end();
}

/** Bytes of the text up to and including the n-th frame, plus `extra` bytes of the next. */
export function bytesThrough(frames: readonly SseFrame[], n: number, extra = 0): number {
  return Buffer.byteLength(sseText(frames.slice(0, n))) + extra;
}

/** A spec-shaped server and a client on it, fresh for every test of the file (closed after each). */
export function useServerAndClient(): { readonly srv: TestServer; readonly c: SvcClient } {
  const t = {} as { srv: TestServer; c: SvcClient };
  beforeEach(async () => {
    t.srv = await startServer();
    t.c = new SvcClient({ baseURL: t.srv.url, apiKey: "k", retryBaseMs: 1 });
  });
  afterEach(() => t.srv.close());
  return t;
}
