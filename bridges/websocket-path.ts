// One WebSocket path on the bridge's HTTP server (Twilio's media streams, browser calls, the
// console's feed): upgrades to that path are checked, accepted, and their sockets kept so that
// they can all be closed, and are closed before the server stops listening (it would otherwise
// wait for them for ever).
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { acceptWebSocket, type ServerWebSocket } from "./websocket-server.ts";

export interface WebSocketPathOptions {
  path: string;
  /** True to let an upgrade through; false once it has answered the refusal on `socket`. */
  authorize?(req: IncomingMessage, socket: Duplex): boolean;
  /** Largest message taken, bytes (default 100 MiB, as the ws library's). */
  maxPayload?: number;
  /** An accepted socket; it leaves the path's set when it closes. */
  onSocket(ws: ServerWebSocket, req: IncomingMessage): void;
}

export interface WebSocketPath {
  /** Sockets open now. */
  readonly open: number;
  closeAll(code?: number, reason?: string): void;
}

export function serveWebSocketPath(http: FastifyInstance, opts: WebSocketPathOptions): WebSocketPath {
  const sockets = new Set<ServerWebSocket>();
  const maxPayload = opts.maxPayload ?? 100 * 2 ** 20;
  http.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if ((req.url ?? "/").split("?")[0] !== opts.path) return;
    if (opts.authorize && !opts.authorize(req, socket)) return;
    const ws = acceptWebSocket(req, socket, head, maxPayload);
    if (!ws) return;
    sockets.add(ws);
    ws.once("close", () => sockets.delete(ws));
    opts.onSocket(ws, req);
  });
  const closeAll = (code = 1001, reason = "bridge shutting down") => {
    for (const ws of sockets) ws.close(code, reason);
  };
  http.addHook("preClose", async () => {
    closeAll();
  });
  return {
    get open() {
      return sockets.size;
    },
    closeAll,
  };
}
