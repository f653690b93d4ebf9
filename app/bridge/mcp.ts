// The agents' MCP servers in the bridge: started with it (src/agents/mcp/servers.ts), their tools
// handed to each call beside the agent's code tools (the session's one port for in-process tools),
// closed at shutdown. The servers are the configuration's at start: a reload that changes an
// agent's `mcpServers` is told to wait for the next start, as a changed port is.
import type { AgentCode } from "../../src/agents/code.ts";
import { type AgentMcp, McpServers, type ServerListing } from "../../src/agents/mcp/servers.ts";
import type { Agent } from "../../src/config/agent.ts";
import type { Config } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CodeTool } from "../../src/session/code-tools.ts";
import { END_CALL, TRANSFER_CALL } from "../../src/session/tools.ts";

export interface BridgeMcp {
  /** The agents' code with their MCP tools added (the directory's `agentCode`). */
  readonly agentCode: ReadonlyMap<string, AgentCode>;
  close(): Promise<void>;
}

/** Starts the servers of every agent that has some; rejects naming each mistake (servers.ts). */
export async function startMcp(
  config: Config,
  agentCode: ReadonlyMap<string, AgentCode> | undefined,
  log: Logger,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<BridgeMcp> {
  const plans = mcpPlans(config, agentCode);
  const code = new Map(agentCode);
  if (plans.length === 0) return { agentCode: code, close: async () => {} };
  const servers = await McpServers.start(plans, log.child({ component: "mcp" }), env);
  for (const { agent } of plans)
    code.set(
      agent,
      withMcpTools(code.get(agent), () => servers.toolsOf(agent)),
    );
  return { agentCode: code, close: () => servers.close() };
}

/** `voice-bridge config`: each agent's servers and the tools they offer, or why they offer none. */
export async function describeMcp(
  config: Config,
  log: Logger,
): Promise<Record<string, Record<string, ServerListing>> | undefined> {
  const plans = mcpPlans(config, undefined);
  return plans.length ? McpServers.describe(plans, log, process.env, 10_000) : undefined;
}

/** Agents whose `mcpServers` a reload changed (they keep the ones they started with). */
export function mcpChanges(before: Config, after: Config): string[] {
  const was = agentsOf(before);
  return [...agentsOf(after)].flatMap(([name, agent]) =>
    JSON.stringify(agent.mcpServers) === JSON.stringify(was.get(name)?.mcpServers ?? {})
      ? []
      : [name === "default" ? "agent.mcpServers" : `agents.${name}.mcpServers`],
  );
}

function mcpPlans(config: Config, agentCode: ReadonlyMap<string, AgentCode> | undefined): AgentMcp[] {
  return [...agentsOf(config)].flatMap(([name, agent]) =>
    Object.keys(agent.mcpServers).length === 0
      ? []
      : [
          {
            agent: name,
            servers: agent.mcpServers,
            timeZone: agent.timeZone,
            otherTools: otherTools(agent, agentCode?.get(name)),
          },
        ],
  );
}

/** As the directory reads them: `agents.default`, when given, in place of `agent:`. */
function agentsOf(config: Config): Map<string, Agent> {
  return new Map([["default", config.agent as Agent], ...Object.entries(config.agents)]);
}

function otherTools(agent: Agent, code: AgentCode | undefined): Map<string, string> {
  const names = new Map<string, string>();
  // transfer_call is the model's whenever the call has a target, which a webhook may give it.
  for (const t of [END_CALL, TRANSFER_CALL])
    names.set(t.function.name, `the built-in tool "${t.function.name}"`);
  for (const t of agent.httpTools) names.set(t.name, `the HTTP tool "${t.name}"`);
  for (const t of code?.tools ?? []) names.set(t.name, `the code tool "${t.name}"`);
  return names;
}

/** The agent's code, its tools followed by the MCP tools offered when a call starts. */
function withMcpTools(code: AgentCode | undefined, mcp: () => readonly CodeTool[]): AgentCode {
  const own = code?.tools ?? [];
  // A getter: an HTTP server that answers later, or a server whose tools change, is seen by the next call.
  return Object.defineProperty({ ...code }, "tools", {
    get: () => [...own, ...mcp()],
    enumerable: true,
  });
}
