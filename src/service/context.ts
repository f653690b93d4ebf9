// What every route module of the local service receives: the shared pieces (accounts, data dir,
// logger, WebSocket router, stores, engines). Route modules are fastify plugins registered with
// `{ ctx }` as their options (see routes/index.ts).
import type { FastifyPluginAsync } from "fastify";
import type { Logger } from "pino";
import type { Accounts } from "./auth.ts";
import type { ServiceConditions } from "./conditions/index.ts";
import type { ChatService } from "./engines/chat/chat-service.ts";
import type { ImageServiceOptions } from "./engines/image/options.ts";
import type { Transcriber } from "./media/transcriber.ts";
import type { RequestTally } from "./request-tally.ts";
import type { Database } from "./store/db.ts";
import type { FileStore } from "./store/files.ts";
import type { WsRouter } from "./ws.ts";

export interface ServiceContext {
  /** Absolute path of the data directory (stores and engines keep their files under it). */
  readonly dataDir: string;
  readonly log: Logger;
  readonly accounts: Accounts;
  /** Register WebSocket endpoints here: `ctx.ws.route(path, { verify?, handle })`. */
  readonly ws: WsRouter;
  /** The metadata database (node:sqlite); stores add their tables with CREATE TABLE IF NOT EXISTS. */
  readonly db: Database;
  /** E9 files: `files.get(account, id)` and `files.pathOf(file)` give a caller's stored bytes. */
  readonly files: FileStore;
  /** Chat generation (E1–E3): engine, media resolution, concurrency. */
  readonly chat: ChatService;
  /**
   * Speech recognition for audio parts in chat requests. Unset until an ASR engine registers
   * itself (`ctx.transcriber = …`); the scripted chat engine reads it at each request.
   */
  transcriber: Transcriber | undefined;
  /** E7/E8 settings (blocklist, clock, engine); defaults when absent. */
  readonly images?: ImageServiceOptions | undefined;
  /** A hosted service's conditions the routes play (its timing, its failures). */
  readonly conditions: ServiceConditions;
  /** Requests handled per endpoint. */
  readonly requests: RequestTally;
}

export interface RouteOptions {
  ctx: ServiceContext;
}

/** A route module: a fastify plugin that registers one endpoint family. */
export type ServiceRoute = FastifyPluginAsync<RouteOptions>;
