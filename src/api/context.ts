// What every endpoint module needs from the client: the request core, and where the speech
// endpoints live (plan tier) and the WebSocket base.
import type { BacklogLimits } from "./backlog.ts";
import type { HttpCore, SvcLogger } from "./http.ts";
import { API_PREFIX, PLAN_PREFIX } from "./types/paths.ts";

export interface ClientContext {
  http: HttpCore;
  apiKey: string;
  /** ws:// or wss:// root matching the HTTP base. */
  wsBaseURL: string;
  planTier: boolean;
  timeoutMs: number;
  logger: SvcLogger | undefined;
  /** What may queue toward a service that does not keep up. */
  backlog: BacklogLimits;
}

/** Prefix of a regular endpoint. */
export function v1(path: string): string {
  return API_PREFIX + path;
}

/** Prefix of a speech endpoint (E4, E5, E6): the plan tier has its own. */
export function speechPath(ctx: ClientContext, path: string): string {
  return (ctx.planTier ? PLAN_PREFIX : API_PREFIX) + path;
}
