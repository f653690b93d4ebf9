// The main job: the bridge process. Serves health endpoints now; the call transports
// (Twilio, SIP, Discord) and the embedded local service attach here as they land.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { type Config, usesLocalService } from "./config.ts";
import type { Logger } from "./log.ts";

export interface Bridge {
  readonly url: string;
  readonly http: FastifyInstance;
  close(): Promise<void>;
}

export async function startBridge(config: Config, log: Logger): Promise<Bridge> {
  const http = Fastify({
    loggerInstance: log.child({ component: "http" }) as FastifyBaseLogger,
    // Per-request lines would drown the per-call story the bridge logs.
    logController: new LogController({ disableRequestLogging: true }),
  });
  let draining = false;
  http.get("/healthz", async () => ({ status: "ok" }));
  http.get("/readyz", async (_req, reply) =>
    draining ? reply.code(503).send({ status: "draining" }) : { status: "ready" },
  );

  const address = await http.listen({ host: config.server.host, port: config.server.port });
  const url = address.replace("://0.0.0.0:", "://127.0.0.1:");
  log.info({ url }, `bridge listening on ${address}`);
  if (usesLocalService(config)) {
    log.info(
      "service: embedded local service (no SVC_BASE_URL / SVC_API_KEY set); it starts here once the local service lands",
    );
  } else {
    log.info({ baseUrl: config.service.baseUrl ?? "(client default)" }, "service: hosted API");
  }
  log.info("serving: GET /healthz, GET /readyz");

  return {
    url,
    http,
    async close() {
      draining = true;
      await http.close();
    },
  };
}
