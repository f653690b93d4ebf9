// The console on the bridge's HTTP server: the page at /, its files under /console/, the
// aggregate latency figures (GET /console/latency, the /metrics histograms' percentiles) and
// the live feed (WS /console/live). Browser calls have their own route (bridges/browser).
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { serveWebSocketPath } from "../../bridges/websocket-path.ts";
import type { Logger } from "../../src/core/log.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import { type Asset, loadAssets } from "./assets.ts";
import { LIVE_PATH } from "./live-events.ts";
import type { LiveFeed } from "./live-feed.ts";

/** Unsent feed a page may fall behind by before it is dropped (it reconnects and starts afresh). */
const MAX_BUFFERED_BYTES = 4 << 20;

// The page loads nothing from elsewhere; its sockets go back to the bridge it came from.
const CSP =
  "default-src 'self'; connect-src 'self'; media-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'";

export interface ConsoleOptions {
  feed: LiveFeed;
  metrics: BridgeMetrics;
  log: Logger;
  /** True to let a live-feed upgrade through; false once it has answered the refusal. */
  authorize(req: IncomingMessage, socket: Duplex): boolean;
  /** The page's files by name (default: the console/ folder). */
  assets?: Map<string, Asset>;
}

export function registerConsole(http: FastifyInstance, opts: ConsoleOptions): void {
  const log = opts.log.child({ component: "console" });
  const assets = opts.assets ?? loadAssets();
  const index = assets.get("index.html")!;

  http.get("/", async (_req, reply) =>
    reply
      .type(index.type)
      .header("content-security-policy", CSP)
      .header("cache-control", "no-cache")
      .send(index.body),
  );
  http.get<{ Params: { file: string } }>("/console/:file", async (req, reply) => {
    const asset = assets.get(req.params.file);
    if (!asset)
      return reply
        .code(404)
        .send({ error: { message: `no console file ${req.params.file}`, type: "not_found" } });
    return reply.type(asset.type).header("cache-control", "no-cache").send(asset.body);
  });
  http.get("/console/latency", async () => opts.metrics.latency());

  serveWebSocketPath(http, {
    path: LIVE_PATH,
    // The page sends nothing on the feed.
    maxPayload: 1024,
    authorize: (req, socket) => {
      if (opts.authorize(req, socket)) return true;
      log.warn({ origin: req.headers.origin }, "live feed refused (token or origin)");
      return false;
    },
    onSocket: (ws) => {
      const stop = opts.feed.subscribe((json) => {
        if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
          log.warn(
            { bufferedBytes: ws.bufferedAmount },
            "a console page fell behind the live feed: dropping it",
          );
          ws.terminate();
          return;
        }
        ws.send(json);
      });
      ws.on("error", (err) => log.debug({ err }, "console page socket error"));
      ws.on("close", stop);
    },
  });
}
