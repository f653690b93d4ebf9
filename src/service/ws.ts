// WebSocket endpoints: one `ws` server in noServer mode, fed from the HTTP server's 'upgrade' event,
// routed by path. The bearer key is checked (and a route's own `verify`, e.g. the model query
// parameter) BEFORE the upgrade, so a refused handshake gets a plain HTTP status and JSON error body.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type WebSocket, WebSocketServer } from "ws";
import type { Accounts } from "./auth.ts";
import { ApiError, toApiError } from "./errors.ts";

export interface WsContext {
  /** The caller's account id (from the bearer key). */
  account: string;
  /** Parsed request URL (path and query). */
  url: URL;
  request: IncomingMessage;
}

export interface WsRoute {
  /** Checks before the upgrade; throw an ApiError to refuse the handshake with that status. */
  verify?: (ctx: WsContext) => void | Promise<void>;
  /** Runs once the connection is open. */
  handle: (ws: WebSocket, ctx: WsContext) => void;
}

const REASONS: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  404: "Not Found",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

export class WsRouter {
  private readonly routes = new Map<string, WsRoute>();
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  private readonly accounts: Accounts;

  constructor(accounts: Accounts) {
    this.accounts = accounts;
  }

  /** Registers a WebSocket endpoint at an exact path (e.g. `/v1/realtime/audio`). */
  route(path: string, route: WsRoute): void {
    if (this.routes.has(path)) throw new Error(`WebSocket route ${path} registered twice`);
    this.routes.set(path, route);
  }

  /** The 'upgrade' listener for the HTTP server. */
  readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    void this.upgrade(request, socket, head);
  };

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on("error", () => socket.destroy());
    try {
      const url = new URL(request.url ?? "/", "http://local");
      const route = this.routes.get(url.pathname);
      if (!route) throw new ApiError(404, `no WebSocket endpoint at ${url.pathname}`, { code: "not_found" });
      const account = this.accounts.authenticate(request.headers);
      const ctx: WsContext = { account, url, request };
      await route.verify?.(ctx);
      this.wss.handleUpgrade(request, socket, head, (ws) => route.handle(ws, ctx));
    } catch (err) {
      refuse(socket, toApiError(err));
    }
  }

  /** Closes every open connection (going away) and the ws server. */
  close(): void {
    for (const client of this.wss.clients) client.close(1001, "server shutting down");
    this.wss.close();
  }
}

function refuse(socket: Duplex, err: ApiError): void {
  if (!socket.writable) return void socket.destroy();
  const body = JSON.stringify(err.toBody());
  socket.end(
    `HTTP/1.1 ${err.status} ${REASONS[err.status] ?? "Error"}\r\n` +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
  );
}
