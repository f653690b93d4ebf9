// The browser face of the bridge on its HTTP server: WS /browser/call, one call per socket (the
// console's "Call the agent"). Who may open one is decided by `authorize` (the bridge's token,
// the page's own origin) before the upgrade.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport } from "../transport.ts";
import { serveWebSocketPath } from "../websocket-path.ts";
import { serveBrowserCall } from "./connection.ts";
import { BROWSER_CALL_PATH } from "./protocol.ts";

export interface BrowserCallsOptions {
  log: Logger;
  clock: Clock;
  /** Called once per call, as soon as its socket is open; the session attaches to the transport. */
  onCall(transport: CallTransport): void;
  /** True to let the upgrade through; false once it has answered the refusal on `socket`. */
  authorize(req: IncomingMessage, socket: Duplex): boolean;
  /** Most agent audio sent ahead of the page's playout, ms (default 200). */
  leadMs?: number;
}

export interface BrowserCalls {
  readonly activeCalls: number;
  closeAll(code?: number, reason?: string): void;
}

export function registerBrowserCalls(http: FastifyInstance, opts: BrowserCallsOptions): BrowserCalls {
  const log = opts.log.child({ transport: "browser" });
  const path = serveWebSocketPath(http, {
    path: BROWSER_CALL_PATH,
    // 64 KiB: a second of 16 kHz audio is 32 KiB; the page sends 640-byte frames.
    maxPayload: 64 * 1024,
    authorize: (req, socket) => {
      if (opts.authorize(req, socket)) return true;
      log.warn({ origin: req.headers.origin }, "browser call refused (token or origin)");
      return false;
    },
    onSocket: (ws, req) =>
      serveBrowserCall({
        ws,
        remote: req.socket.remoteAddress ?? "unknown",
        userAgent: req.headers["user-agent"],
        to: new URL(req.url ?? "/", "http://x").searchParams.get("agent") ?? undefined,
        log,
        clock: opts.clock,
        leadMs: opts.leadMs,
        onCall: opts.onCall,
      }),
  });
  return {
    get activeCalls() {
      return path.open;
    },
    closeAll: path.closeAll,
  };
}
