// What every route module of the local service receives: the shared pieces (accounts, data dir,
// logger, WebSocket router, stores, engines). Route modules are fastify plugins registered with
// `{ ctx }` as their options (see routes/index.ts).
import type { FastifyPluginAsync } from "fastify";
import type { Logger } from "pino";
import type { Accounts } from "./auth.ts";
import type { WsRouter } from "./ws.ts";

export interface ServiceContext {
  /** Absolute path of the data directory (stores and engines keep their files under it). */
  readonly dataDir: string;
  readonly log: Logger;
  readonly accounts: Accounts;
  /** Register WebSocket endpoints here: `ctx.ws.route(path, { verify?, handle })`. */
  readonly ws: WsRouter;
}

export interface RouteOptions {
  ctx: ServiceContext;
}

/** A route module: a fastify plugin that registers one endpoint family. */
export type ServiceRoute = FastifyPluginAsync<RouteOptions>;
