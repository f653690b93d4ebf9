// The agents new calls get, swapped whole by a reload (SIGHUP, POST /admin/reload, the library's
// reload()): live calls keep the agent they were given; sections a reload does not apply are named
// in the log as waiting for the next start.
import type { AgentCode } from "../../src/agents/code.ts";
import { AgentDirectory, type PickObserver } from "../../src/agents/directory.ts";
import type { Config } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import { type ReloadResult, reloadWith, sectionsNeedingRestart } from "../reload.ts";
import { mcpChanges } from "./mcp.ts";

export interface LiveAgents {
  readonly directory: AgentDirectory;
  /** Takes `next` (already validated), else reads the configuration again with `readConfig`. */
  reload(next?: Config): ReloadResult;
}

export interface LiveAgentsDeps {
  readonly log: Logger;
  readonly observer: PickObserver;
  readonly agentCode: ReadonlyMap<string, AgentCode> | undefined;
  readonly readConfig: (() => Config) | undefined;
  readonly liveCalls: () => number;
  /** Runs first on every reload (the SIP server takes a renewed TLS certificate). */
  readonly onReload: () => void;
}

export function liveAgents(config: Config, d: LiveAgentsDeps): LiveAgents {
  let directory = new AgentDirectory(config, d.observer, d.agentCode);
  let running = config;
  const apply = (next: Config): ReloadResult => {
    directory = new AgentDirectory(next, d.observer, d.agentCode);
    // The MCP servers are the ones started with the bridge (mcp.ts).
    const restartNeeded = [...sectionsNeedingRestart(running, next), ...mcpChanges(running, next)];
    running = next;
    d.log.info(
      { agents: directory.names, routes: next.routes.length, liveCalls: d.liveCalls() },
      "configuration reloaded: new calls get these agents, live calls keep theirs",
    );
    if (restartNeeded.length)
      d.log.warn(
        { sections: restartNeeded },
        "reload: these sections changed and take effect at the next start",
      );
    return { ok: true, agents: directory.names, restartNeeded };
  };
  return {
    get directory() {
      return directory;
    },
    reload(next) {
      d.onReload();
      if (next) return apply(next);
      if (!d.readConfig)
        return { ok: false, error: "this bridge was started without a configuration to read again" };
      return reloadWith(d.readConfig, apply, d.log);
    },
  };
}
