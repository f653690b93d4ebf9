// The bridge's agents as configured, and the choice of one per call: the console's choice (a
// browser call names its agent), else the first matching route, else `default`; then the
// call-start webhook (the route's or the global one), whose answer may reject the call, name
// another agent, add variables and override single settings. Built once per configuration: a
// reload builds a new directory, and live calls keep the agent they were given.

import { type Agent, agentSchema } from "../config/agent.ts";
import type { Config } from "../config/config.ts";
import type { Route, WebhookConfig } from "../config/routes.ts";
import { unknownKeyMessage, unknownKeys } from "../config/unknown-keys.ts";
import type { Logger } from "../core/log.ts";
import type { ServiceDeadlines } from "../session/config.ts";
import type { CallInfo } from "../session/transport.ts";
import {
  type CallAgent,
  modelsOf,
  resilienceOf,
  serviceDeadlinesFor,
  sessionConfigOf,
} from "./call-agent.ts";
import { type AgentCode, askCallStartHook } from "./code.ts";
import { routeFor } from "./routes.ts";
import { nowIn, TemplateRenderer } from "./templates.ts";
import { askCallStart, type WebhookFailure } from "./webhook.ts";

/** How long the choice took, ms: all of it, and the webhook's round trip when one was asked. */
export interface PickTiming {
  pickMs: number;
  webhookMs?: number;
}

export type AgentPick =
  | { kind: "agent"; agent: CallAgent; timing: PickTiming }
  | { kind: "reject"; reason: string; agent: string; timing: PickTiming };

export interface PickObserver {
  /** A webhook answer that could not be used (the /metrics counter). */
  webhookFailed?(cause: WebhookFailure | "unknown_agent" | "bad_overrides"): void;
}

export class AgentDirectory {
  readonly #agents: ReadonlyMap<string, Agent>;
  readonly #routes: readonly Route[];
  readonly #webhook: WebhookConfig | undefined;
  readonly #service: Config["service"];
  /** Deadlines where an agent sets none: the service's (call-agent.ts serviceDeadlinesFor). */
  readonly #deadlines: ServiceDeadlines;
  readonly #observer: PickObserver;
  readonly #code: ReadonlyMap<string, AgentCode>;

  /** `code`: the tools and hooks of agents defined in code (the TypeScript API), by name. */
  constructor(config: Config, observer: PickObserver = {}, code: ReadonlyMap<string, AgentCode> = new Map()) {
    // `agents.default` when given (the config refuses it beside a non-empty `agent:`), else `agent:`.
    this.#agents = new Map([["default", config.agent as Agent], ...Object.entries(config.agents)]);
    this.#routes = config.routes;
    this.#webhook = config.agentWebhook;
    this.#service = config.service;
    this.#deadlines = serviceDeadlinesFor(config);
    this.#observer = observer;
    this.#code = code;
  }

  /** The agents' names, `default` first (the console's choice). */
  get names(): string[] {
    return [...this.#agents.keys()];
  }

  get(name: string): Agent | undefined {
    return this.#agents.get(name);
  }

  /** The agent for a call, asking the webhook when one applies (it may reject the call). */
  async pick(info: CallInfo, log: Logger): Promise<AgentPick> {
    const started = performance.now();
    const route = routeFor(this.#routes, info);
    const chosen =
      info.transport === "browser" && info.to && this.#agents.has(info.to)
        ? { name: info.to, by: "console" as const }
        : { name: route?.agent ?? "default", by: route ? ("route" as const) : ("default" as const) };
    const hook = route?.agentWebhook ?? this.#webhook;
    // The routed agent's own onCallStart answers in-process, in place of the webhook.
    const onCallStart = this.#code.get(chosen.name)?.onCallStart;
    let name = chosen.name;
    let chosenBy: CallAgent["chosenBy"] = chosen.by;
    let variables: Record<string, string> = {};
    let overrides: Record<string, unknown> | undefined;
    let webhookMs: number | undefined;
    const timing = (): PickTiming => ({
      pickMs: round(performance.now() - started),
      ...(webhookMs !== undefined ? { webhookMs } : {}),
    });
    if (hook || onCallStart) {
      const request = {
        callId: info.callId,
        transport: info.transport,
        from: info.from ?? null,
        to: info.to ?? null,
        params: info.params,
        agent: name,
      };
      const result = onCallStart
        ? await askCallStartHook(onCallStart, request)
        : await askCallStart(hook!, request);
      const asked = onCallStart ? `onCallStart of agent "${name}"` : "call-start webhook";
      const url = onCallStart ? undefined : hook?.url;
      webhookMs = result.ms;
      if (!result.ok) {
        this.#observer.webhookFailed?.(result.cause);
        log.warn(
          { url, cause: result.cause, detail: result.detail, ms: result.ms, agent: name },
          `${asked}: ${result.cause.replace("_", " ")} (${result.detail}); the call goes to agent "${name}"`,
        );
      } else {
        const a = result.answer;
        if (a.reject) {
          const reason =
            typeof a.reject === "object" && a.reject.reason ? a.reject.reason : `rejected by the ${asked}`;
          return { kind: "reject", reason, agent: name, timing: timing() };
        }
        if (a.agent !== undefined && !this.#agents.has(a.agent)) {
          this.#observer.webhookFailed?.("unknown_agent");
          log.warn(
            { url, asked: a.agent, agents: this.names },
            `${asked}: no agent named "${a.agent}"; the call goes to agent "${name}"`,
          );
        } else if (a.agent !== undefined) {
          name = a.agent;
          chosenBy = "webhook";
        }
        variables = a.variables ?? {};
        overrides = a.overrides;
      }
    }
    const callAgent = this.#resolve(name, chosenBy, info, variables, overrides, log);
    return { kind: "agent", agent: callAgent, timing: timing() };
  }

  /**
   * The named agent for a call the bridge places (POST /calls): no route or webhook is asked, the
   * request's variables fill its templates. Undefined when no agent has that name.
   */
  forOutbound(
    name: string,
    info: CallInfo,
    variables: Readonly<Record<string, string>>,
    log: Logger,
  ): CallAgent | undefined {
    if (!this.#agents.has(name)) return undefined;
    return this.#resolve(name, "request", info, { ...variables }, undefined, log);
  }

  #resolve(
    name: string,
    chosenBy: CallAgent["chosenBy"],
    info: CallInfo,
    variables: Record<string, string>,
    overrides: Record<string, unknown> | undefined,
    log: Logger,
  ): CallAgent {
    const agent = this.#withOverrides(this.#agents.get(name)!, overrides, log);
    const code = this.#code.get(name);
    const missingLog = log.child({ agent: name });
    const renderer = new TemplateRenderer(
      {
        caller: info.from,
        called: info.to,
        transport: info.transport,
        params: info.params,
        vars: variables,
        now: nowIn(agent.timeZone, new Date()),
      },
      (variable) => missingLog.info({ variable }, `{{${variable}}} has no value on this call: left empty`),
    );
    return {
      name,
      session: {
        ...sessionConfigOf(agent, renderer, this.#deadlines),
        agentName: name,
        variables,
        ...(code?.tools ? { codeTools: code.tools } : {}),
      },
      prompted: agent.systemPrompt !== undefined,
      models: modelsOf(agent, this.#service),
      resilience: resilienceOf(agent),
      variables,
      analysis: agent.analysis,
      recording: agent.recording,
      chosenBy,
      handoffTo: (next) =>
        this.#agents.has(next) ? this.#resolve(next, "handoff", info, variables, undefined, log) : undefined,
    };
  }

  /** The agent with the webhook's overrides, when they are valid settings of an agent. */
  #withOverrides(agent: Agent, overrides: Record<string, unknown> | undefined, log: Logger): Agent {
    if (!overrides || Object.keys(overrides).length === 0) return agent;
    const problems = unknownKeys(agentSchema, overrides).map(
      (k) => `${k.path.join(".")}: ${unknownKeyMessage(k)}`,
    );
    // The agent's MCP servers are started with the bridge, not per call (app/bridge/mcp.ts).
    if ("mcpServers" in overrides) problems.push("mcpServers: an agent's MCP servers cannot change per call");
    const merged = agentSchema.safeParse({ ...agent, ...overrides });
    if (!merged.success)
      for (const issue of merged.error.issues) problems.push(`${issue.path.join(".")}: ${issue.message}`);
    if (problems.length === 0 && merged.success) return merged.data;
    this.#observer.webhookFailed?.("bad_overrides");
    log.warn({ problems }, "call-start webhook: overrides refused; the agent's own settings apply");
    return agent;
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
