// The HTTP server of the local service: fastify with bearer auth on every request, one JSON error
// shape for every failure before a response starts, WebSocket upgrades routed by ctx.ws, and the
// route modules of routes/index.ts registered as plugins.
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { ServiceContext, ServiceRoute } from "./context.ts";
import { ApiError, toApiError } from "./errors.ts";
import { requestShape } from "./request-tally.ts";

/** Default JSON body limit; routes that take media inline (chat) raise it for themselves. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** version 00 of the traceparent header: version, trace id, parent span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Methods whose routes take no body. */
const BODYLESS = new Set(["GET", "HEAD", "DELETE", "OPTIONS"]);

export async function buildServer(
  ctx: ServiceContext,
  routes: readonly ServiceRoute[],
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    // Streams and load tests would drown the log in per-request lines; failures are logged below.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Ids in paths are checked by the routes; keep fastify from rewriting them.
    routerOptions: { ignoreTrailingSlash: true },
    // A request that names its trace (a W3C traceparent: the bridge sends one when it traces its
    // calls) logs that trace's id, so the service's lines about it are found from the trace.
    childLoggerFactory: (logger, bindings, opts, raw) => {
      const traceId = TRACEPARENT.exec(String(raw.headers.traceparent ?? ""))?.[1];
      return logger.child(traceId ? { ...bindings, trace_id: traceId } : bindings, opts);
    },
  });

  // JSON endpoints take JSON (uploads add multipart): a text/plain body gets a clear 400.
  app.removeContentTypeParser("text/plain");
  // Official SDKs (openai-python) send `Content-Type: application/json` on every request, a
  // body-less GET or DELETE included: a route that takes no body accepts an empty one.
  const json = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    if (body === "" && BODYLESS.has(request.method)) return done(null, undefined);
    return json(request, body as string, done);
  });
  app.decorateRequest("account", "");
  app.addHook("onRequest", async (request) => {
    request.account = ctx.accounts.authenticate(request.headers);
  });
  // Each request handled (authenticated, its body read) is counted, and logged at debug level.
  app.addHook("preHandler", async (request) => {
    const endpoint = `${request.method} ${request.routeOptions.url ?? "(no endpoint)"}`;
    const shape = requestShape(request.body);
    ctx.requests.add(endpoint, shape);
    request.log.debug({ endpoint, ...shape }, "request");
  });

  app.setErrorHandler((err, request, reply) => {
    if (clientWentAway(request, err)) {
      // Nothing failed here and nobody is left to answer: the bridge drops a recognition that the
      // caller's next words superseded, or whose call ended. Not an error.
      request.log.debug(
        { method: request.method, url: request.url },
        "client closed the request before its answer",
      );
      return;
    }
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) request.log.error({ err }, "request failed");
    else request.log.debug({ status: apiErr.status, msg: apiErr.message }, "request refused");
    // A stream that already started reports its own failures in-band.
    if (reply.sent || reply.raw.headersSent) return;
    void reply.code(apiErr.status).send(apiErr.toBody());
  });

  app.setNotFoundHandler((request, reply) => {
    const err = new ApiError(404, `no endpoint ${request.method} ${request.url.split("?")[0]}`, {
      code: "not_found",
    });
    void reply.code(404).send(err.toBody());
  });

  for (const route of routes) await app.register(route, { ctx });

  app.server.on("upgrade", ctx.ws.onUpgrade);
  app.addHook("onClose", async () => ctx.ws.close());
  dropUnusedConnectionsOnClose(app);
  return app;
}

/** How long closing waits for requests under way before their connections are cut. */
export const CLOSE_GRACE_MS = 5_000;

/**
 * Closes the server, giving requests under way `graceMs` to finish. Node's server.close() waits
 * for each of them however long it takes: a client that keeps a request open (an upload it never
 * ends, a recognition sent as its own process exits) held the bridge's shutdown for as long as
 * the server's request timeout, 77 s in one test run. After the grace their connections are cut.
 */
export async function closeServer(app: FastifyInstance, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const cut = setTimeout(() => {
    app.log.warn(
      { grace_ms: graceMs },
      "closing: requests still under way after the grace; their connections are cut",
    );
    app.server.closeAllConnections();
  }, graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

/** The client's connection closed while its request was still being read (Node's "aborted"). */
function clientWentAway(request: FastifyRequest, err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === "ECONNRESET" && request.raw.destroyed;
}

/**
 * A connection no request has come on yet holds nothing, yet Node's server.close() waits for it:
 * a client's pool keeps such a socket (one opened for a request that was aborted before it was
 * sent, as a call hung up while its session starts does) until its own idle timeout, 4 s for
 * undici, and closing the embedded service took that long. Those are dropped when closing.
 */
function dropUnusedConnectionsOnClose(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  app.server.on("connection", (socket: Socket) => {
    unused.add(socket);
    socket.once("close", () => unused.delete(socket));
  });
  const used = (req: IncomingMessage) => unused.delete(req.socket);
  app.server.on("request", used);
  app.server.on("upgrade", used);
  app.addHook("preClose", async () => {
    for (const socket of unused) socket.destroy();
  });
}
