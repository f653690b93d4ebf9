// Every agent's MCP servers, for the life of a bridge: each started (stdio) or connected (HTTP) once
// at start, shared by the calls, and the tools each agent offers the model worked out from them.
//
// At start, what is certainly a mistake stops the bridge with every problem named: a tool name
// that clashes with another of the agent's tools (two tools, one name: the model could not say
// which it means), a tool the `tools` list names that the server lacks, a `${NAME}` that is not
// set, and a stdio server that does not start (a wrong command or a crashing program will not
// mend itself, and a bridge whose agent silently lacks its tools is worse than one that refuses to
// start). An HTTP server that does not answer is only warned about: it is a service elsewhere whose
// outage should not take the phone line down; it is connected in the background, and its tools
// join the calls that start once it answers.

import { LIMITS, TOOL_NAME_PATTERN } from "../../api/types/index.ts";
import type { McpServerConfig } from "../../config/mcp-servers.ts";
import { ENV_REFERENCE } from "../../config/mcp-servers.ts";
import { TEMPLATE } from "../../config/templates.ts";
import type { Logger } from "../../core/log.ts";
import type { CodeTool } from "../../session/code-tools.ts";
import { McpConnection, type McpEndpoint, type McpTool, messageOf } from "./connection.ts";
import { mcpCodeTool } from "./tools.ts";

/** One agent's servers, and what else answers to a tool name in it. */
export interface AgentMcp {
  readonly agent: string;
  readonly servers: Readonly<Record<string, McpServerConfig>>;
  readonly timeZone: string;
  /** The agent's other tools by name, each said as a person reads it ("the HTTP tool lookup"). */
  readonly otherTools: ReadonlyMap<string, string>;
}

/** Where `${NAME}` is read: the bridge's environment (createBridge's `env`). */
type Environment = Readonly<Record<string, string | undefined>>;

/** What `voice-bridge config` shows of a server: the tools offered, or why there are none. */
export type ServerListing = { tools: string[] } | { error: string };

interface Server {
  readonly agent: AgentMcp;
  readonly name: string;
  readonly config: McpServerConfig;
  readonly kind: McpEndpoint["kind"];
  readonly connection: McpConnection;
  /** Header templates filled per call. */
  readonly callHeaders: Record<string, string>;
}

interface Offer {
  tools: CodeTool[];
  /** The names offered from each server. */
  names: Map<Server, string[]>;
  /** Certain mistakes: clashes, tools named in `tools` the server lacks. */
  problems: string[];
  /** Tools left out for a name the model cannot call. */
  unfit: string[];
}

export class McpServers {
  readonly #servers: Server[] = [];
  readonly #offers = new Map<string, Offer>();
  readonly #log: Logger;
  readonly #connectTimeoutMs: number | undefined;
  #started = false;

  private constructor(log: Logger, connectTimeoutMs?: number) {
    this.#log = log;
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** Starts every agent's servers; rejects, with every server closed, naming each mistake. */
  static async start(
    agents: readonly AgentMcp[],
    log: Logger,
    env: Environment = process.env,
  ): Promise<McpServers> {
    const pool = new McpServers(log);
    const problems = pool.#plan(agents, env);
    if (problems.length) throw new Error(startError(problems));
    const failed = await pool.#connectAll();
    for (const { server, error } of failed) {
      if (server.kind === "stdio") problems.push(`${labelOf(server)} could not start: ${error}`);
      else {
        log.warn(
          { err: error },
          `${labelOf(server)} does not answer: the bridge keeps trying in the background`,
        );
        server.connection.reconnectLater();
      }
    }
    for (const a of agents) problems.push(...pool.#refresh(a).problems);
    if (problems.length) {
      await pool.close();
      throw new Error(startError(problems));
    }
    pool.#started = true;
    for (const s of pool.#servers)
      if (s.connection.connected)
        log.info({ tools: pool.#offered(s) }, `${labelOf(s)} connected (${s.kind})`);
    return pool;
  }

  /** Connects to every server once and says what each offers (`voice-bridge config`), then closes. */
  static async describe(
    agents: readonly AgentMcp[],
    log: Logger,
    env: Environment = process.env,
    connectTimeoutMs?: number,
  ): Promise<Record<string, Record<string, ServerListing>>> {
    const pool = new McpServers(log, connectTimeoutMs);
    const problems = pool.#plan(agents, env);
    const failed = new Map((await pool.#connectAll()).map((f) => [f.server, f.error]));
    const out: Record<string, Record<string, ServerListing>> = {};
    for (const a of agents) problems.push(...pool.#refresh(a).problems);
    for (const s of pool.#servers) {
      const error = failed.get(s) ?? problems.find((p) => p.includes(labelOf(s)));
      const listing = out[s.agent.agent] ?? {};
      listing[s.name] = error ? { error } : { tools: pool.#offered(s) };
      out[s.agent.agent] = listing;
    }
    await pool.close();
    return out;
  }

  /** The MCP tools `agent` offers now (its servers' as last listed, clashing ones left out). */
  toolsOf(agent: string): readonly CodeTool[] {
    return this.#offers.get(agent)?.tools ?? [];
  }

  /** Ends every stdio server and HTTP session. */
  async close(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.connection.close()));
  }

  #plan(agents: readonly AgentMcp[], env: Environment): string[] {
    const problems: string[] = [];
    for (const agent of agents)
      for (const [name, config] of Object.entries(agent.servers)) {
        const where = `agent "${agent.agent}", MCP server "${name}"`;
        const fill = (text: string, key: string) =>
          text.replace(ENV_REFERENCE, (_all, variable: string) => {
            const value = env[variable];
            if (value === undefined)
              problems.push(`${where}: ${key} reads \${${variable}}, which the environment does not set`);
            return value ?? "";
          });
        const filled = (record: Readonly<Record<string, string>> | undefined, key: string) =>
          Object.fromEntries(Object.entries(record ?? {}).map(([k, v]) => [k, fill(v, `${key}.${k}`)]));
        const headers = filled(config.headers, "headers");
        const perCall = (v: string) => new RegExp(TEMPLATE.source).test(v);
        const endpoint: McpEndpoint =
          config.url !== undefined
            ? {
                kind: "http",
                url: config.url,
                headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => !perCall(v))),
              }
            : {
                kind: "stdio",
                command: config.command!,
                args: (config.args ?? []).map((a, i) => fill(a, `args[${i}]`)),
                env: filled(config.env, "env"),
                ...(config.cwd ? { cwd: config.cwd } : {}),
              };
        const server: Server = {
          agent,
          name,
          config,
          kind: endpoint.kind,
          callHeaders: Object.fromEntries(Object.entries(headers).filter(([, v]) => perCall(v))),
          connection: new McpConnection({
            label: where,
            endpoint,
            log: this.#log.child({ agent: agent.agent, mcpServer: name }),
            ...(this.#connectTimeoutMs ? { connectTimeoutMs: this.#connectTimeoutMs } : {}),
            onTools: () => {
              if (this.#started) this.#refresh(agent);
            },
          }),
        };
        this.#servers.push(server);
      }
    return problems;
  }

  /** One attempt each, all at once; the ones that failed, with why. */
  async #connectAll(): Promise<Array<{ server: Server; error: string }>> {
    const results = await Promise.allSettled(this.#servers.map((s) => s.connection.connect()));
    return results.flatMap((r, i) =>
      r.status === "rejected" ? [{ server: this.#servers[i]!, error: messageOf(r.reason) }] : [],
    );
  }

  /** Works out `agent`'s offer again from its servers' tools; after start, logs what is wrong. */
  #refresh(agent: AgentMcp): Offer {
    const taken = new Map(agent.otherTools);
    const offer: Offer = { tools: [], names: new Map(), problems: [], unfit: [] };
    for (const s of this.#servers) {
      if (s.agent !== agent) continue;
      const names: string[] = [];
      offer.names.set(s, names);
      const listed = s.connection.tools;
      const wanted = s.config.tools;
      if (wanted && s.connection.connected)
        for (const n of wanted)
          if (!listed.some((t) => t.name === n))
            offer.problems.push(
              `${labelOf(s)}: its \`tools\` list names "${n}", which the server does not offer (it offers ${listed.map((t) => t.name).join(", ") || "none"})`,
            );
      for (const tool of listed) {
        if (wanted && !wanted.includes(tool.name)) continue;
        if (!fitName(tool)) {
          offer.unfit.push(`${labelOf(s)}: tool "${tool.name}"`);
          continue;
        }
        const other = taken.get(tool.name);
        if (other) {
          offer.problems.push(
            `${labelOf(s)}: its tool "${tool.name}" has the name of ${other}; leave one out (the server's \`tools\` list)`,
          );
          continue;
        }
        taken.set(tool.name, `the tool "${tool.name}" of MCP server "${s.name}"`);
        names.push(tool.name);
        offer.tools.push(
          mcpCodeTool({
            tool,
            server: s.name,
            connection: s.connection,
            timeoutMs: s.config.timeoutMs,
            callHeaders: s.callHeaders,
            timeZone: s.agent.timeZone,
          }),
        );
      }
    }
    this.#offers.set(agent.agent, offer);
    if (offer.unfit.length)
      this.#log.warn(
        { tools: offer.unfit },
        "MCP tools left out: a tool name the model can call has letters, digits, _ and - (at most 64)",
      );
    if (this.#started && offer.problems.length)
      this.#log.error({ problems: offer.problems }, `agent "${agent.agent}": MCP tools left out`);
    return offer;
  }

  #offered(s: Server): string[] {
    return this.#offers.get(s.agent.agent)?.names.get(s) ?? [];
  }
}

function fitName(tool: McpTool): boolean {
  return TOOL_NAME_PATTERN.test(tool.name) && tool.name.length <= LIMITS.toolNameRecommendedMaxChars;
}

function labelOf(s: Server): string {
  return `agent "${s.agent.agent}", MCP server "${s.name}"`;
}

function startError(problems: string[]): string {
  return `MCP servers:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}
