// The bridge's HTTP server and what it serves besides the call transports: health, readiness and
// metrics for the load balancer and the scraper; the agents, a reload, the call records and the
// console for people and programs holding the bridge's token.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { SipServer } from "../../bridges/sip/index.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallStore } from "../../src/records/store/call-store.ts";
import type { LiveFeed } from "../console/live-feed.ts";
import { registerConsole } from "../console/routes.ts";
import type { BridgeAccess } from "../http/access.ts";
import { type CallReader, registerCallRoutes } from "../http/call-routes.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import { type ReloadResult, registerReload } from "../reload.ts";

export interface BridgeHttpDeps {
  readonly log: Logger;
  readonly metrics: BridgeMetrics;
  readonly store: CallStore;
  readonly access: BridgeAccess;
  readonly draining: () => boolean;
  readonly liveCalls: () => number;
  /** The SIP server once it is up (its registrations are detail on /readyz). */
  readonly sip: () => SipServer | undefined;
  readonly agentNames: () => string[];
  readonly reload: () => ReloadResult;
  readonly calls: CallReader;
  readonly feed: LiveFeed | undefined;
  /**
   * The embedded local service's timing (`none`, `hosted: asr=400,…`), said on /readyz so a
   * simulated call can tell what it ran under; undefined on a hosted service.
   */
  readonly serviceTiming: string | undefined;
  /** The failures it plays (`none`, `chat503=0.3,… seed 1`), said beside its timing. */
  readonly serviceFaults: string | undefined;
}

export function bridgeHttp(d: BridgeHttpDeps): FastifyInstance {
  const { access } = d;
  const http = Fastify({
    loggerInstance: d.log.child({ component: "http" }) as FastifyBaseLogger,
    // Per-request lines would drown the per-call story the bridge logs.
    logController: new LogController({ disableRequestLogging: true }),
  });
  registerProbes(http, d);
  access.guard(
    http,
    (path) =>
      path === "/" ||
      path.startsWith("/console/") ||
      path === "/calls" ||
      path.startsWith("/calls/") ||
      path === "/campaigns" ||
      path.startsWith("/campaigns/") ||
      path === "/agents",
  );
  // The agents a browser call can reach (the console's "Call the agent" offers each).
  http.get("/agents", async () => ({ agents: d.agentNames() }));
  registerReload(http, access, d.reload);
  registerCallRoutes(http, d.calls);
  const { feed } = d;
  if (feed) {
    registerConsole(http, {
      feed,
      metrics: d.metrics,
      log: d.log,
      authorize: (req, socket) => access.upgrade(req, socket),
    });
  }
  return http;
}

/** Listens where `server` says; resolves with the URL to reach it on this machine. */
export async function listen(
  http: FastifyInstance,
  server: { readonly host: string; readonly port: number },
  log: Logger,
  serving: { readonly recordings: boolean; readonly console: boolean; readonly tokenRequired: boolean },
): Promise<string> {
  const address = await http.listen({ host: server.host, port: server.port });
  const url = address.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  log.info({ url }, `bridge listening on ${address}`);
  log.info(
    `serving: POST /twilio/voice, WS /twilio/media, GET /calls, /calls/:id${serving.recordings ? ", /calls/:id/recording" : ""}, /metrics, /healthz, /readyz${serving.console ? "; the console: GET /, WS /console/live, WS /browser/call" : ""}${serving.tokenRequired ? " (BRIDGE_TOKEN required on the console and /calls)" : ""}`,
  );
  return url;
}

/** GET /healthz, /readyz, /metrics. */
function registerProbes(http: FastifyInstance, d: BridgeHttpDeps): void {
  const { store, metrics } = d;
  http.get("/healthz", async () => ({ status: "ok" }));
  // Ready while the database is down (calls go on, writes wait): the store's trouble is said here.
  // SIP registrations are detail, not readiness: a bridge whose trunk refused it still takes direct calls.
  const sipDetail = () => {
    const registrations = d.sip()?.registrations() ?? [];
    return registrations.length > 0 ? { sip: { registrations } } : {};
  };
  const service =
    d.serviceTiming === undefined
      ? {}
      : {
          localService: {
            timing: d.serviceTiming,
            ...(d.serviceFaults === undefined ? {} : { faults: d.serviceFaults }),
          },
        };
  http.get("/readyz", async (_req, reply) => {
    const records = store.trouble
      ? { engine: store.engine, trouble: store.trouble }
      : { engine: store.engine };
    return d.draining()
      ? reply.code(503).send({ status: "draining", store: records, ...sipDetail() })
      : { status: "ready", calls: d.liveCalls(), store: records, ...service, ...sipDetail() };
  });
  http.get("/metrics", async (_req, reply) => {
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}
