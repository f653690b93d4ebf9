// Reloading the configuration without dropping calls: SIGHUP, or POST /admin/reload (what
// `voice-bridge reload` sends). The file and environment are read again and validated; a bad
// configuration is refused with its errors and the running one stays. What a reload changes is
// the agents, routes and call-start webhook: new calls get the new ones, live calls keep theirs.
// Other sections (ports, service, tokens) take effect at the next start, and the log says so.
import { isIP } from "node:net";
import type { FastifyInstance } from "fastify";
import { type Config, ConfigError } from "../src/config/config.ts";
import type { Logger } from "../src/core/log.ts";
import type { BridgeAccess } from "./http/access.ts";

export const RELOAD_PATH = "/admin/reload";

export type ReloadResult =
  | { ok: true; agents: string[]; restartNeeded: string[] }
  | { ok: false; error: string };

/** The sections a reload applies; the rest are read at start. */
const RELOADED = new Set(["agent", "agents", "routes", "agentWebhook"]);

/** Sections other than the reloaded ones that differ between two configurations. */
export function sectionsNeedingRestart(before: Config, after: Config): string[] {
  return Object.keys(after).filter(
    (k) =>
      !RELOADED.has(k) &&
      JSON.stringify((before as Record<string, unknown>)[k]) !==
        JSON.stringify((after as Record<string, unknown>)[k]),
  );
}

/** Reads the configuration again and hands it to `apply`; a ConfigError is refused and logged. */
export function reloadWith(
  read: () => Config,
  apply: (next: Config) => ReloadResult,
  log: Logger,
): ReloadResult {
  let next: Config;
  try {
    next = read();
  } catch (err) {
    const error =
      err instanceof ConfigError ? err.message : `cannot read the configuration: ${(err as Error).message}`;
    log.error({ error }, "reload refused: the configuration has errors; the running one stays");
    return { ok: false, error };
  }
  return apply(next);
}

/** POST /admin/reload: the bridge's token when it has one, else only from this machine. */
export function registerReload(
  http: FastifyInstance,
  access: BridgeAccess,
  reload: () => ReloadResult,
): void {
  http.post(RELOAD_PATH, async (req, reply) => {
    const remote = req.socket.remoteAddress ?? "";
    const local = remote === "127.0.0.1" || remote === "::1" || remote === "::ffff:127.0.0.1";
    if (access.required ? !access.allows(req.headers) : !local || !isIP(remote))
      return reply.code(access.required ? 401 : 403).send({
        error: {
          message: access.required
            ? "reload needs the bridge's token: Authorization: Bearer <BRIDGE_TOKEN>"
            : "reload is open to this machine only (set BRIDGE_TOKEN to allow it from elsewhere)",
          type: "unauthorized",
        },
      });
    const result = reload();
    return reply.code(result.ok ? 200 : 422).send(result);
  });
}
