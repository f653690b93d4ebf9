// One call's agent, resolved: the agent's settings with the call's variables filled in, as the
// session takes them (SessionConfig) and as the service adapters take them (models and voice).

import type { Agent, AgentFallback, AnalysisPlan } from "../config/agent.ts";
import { type Config, usesLocalService } from "../config/config.ts";
import type { ServiceDeadlines, SessionConfig } from "../session/config.ts";
import {
  DEFAULT_SERVICE_DEADLINES,
  DEFAULT_SESSION_CONFIG,
  EMBEDDED_SERVICE_DEADLINES,
} from "../session/config.ts";
import type { CircuitSettings } from "../session/resilience/circuit-breaker.ts";
import type { ServiceModels } from "../session/services.ts";
import type { HttpToolConfig } from "../session/tools.ts";
import type { TemplateRenderer } from "./templates.ts";
import { turnTakingFrom } from "./turn-taking.ts";

export interface CallAgent {
  /** The agent's name (`default` unless a route, the webhook or the console chose another). */
  readonly name: string;
  readonly session: SessionConfig;
  /** The agent has a system prompt of its own (else the session's default is in `session`). */
  readonly prompted: boolean;
  readonly models: ServiceModels;
  /** What the call's services do when the agent's own fail (#54): hedging, fallback, circuits. */
  readonly resilience: ServiceResilience;
  /** The webhook's variables for this call (recorded with it). */
  readonly variables: Readonly<Record<string, string>>;
  readonly analysis: AnalysisPlan | undefined;
  readonly recording: boolean;
  /** What chose the agent, for the log. */
  readonly chosenBy: "route" | "default" | "webhook" | "console" | "request" | "handoff";
  /** Another agent for the same call (its variables kept), when one has that name: a handoff's. */
  readonly handoffTo?: (name: string) => CallAgent | undefined;
}

/** An agent's fallback: the models, voice and service its calls turn to when their own fail. */
export interface ServiceFallback {
  readonly chatModel?: string;
  readonly ttsModel?: string;
  readonly voice?: string;
  readonly asrModel?: string;
  /** Another service (with its own key), or the agent's own when absent. */
  readonly endpoint?: { readonly baseUrl: string; readonly apiKey: string };
}

export interface ServiceResilience {
  /** Start a second chat request when the first is late (deadlines.chatFirstMs). */
  readonly hedge: boolean;
  readonly fallback: ServiceFallback | undefined;
  readonly circuit: CircuitSettings;
}

/** The agent's hedging, fallback and circuit settings. */
export function resilienceOf(agent: Agent): ServiceResilience {
  return {
    hedge: agent.hedge,
    fallback: agent.fallback && fallbackOf(agent.fallback),
    circuit: {
      failures: agent.circuit.failures,
      windowMs: agent.circuit.windowSeconds * 1000,
      openMs: agent.circuit.openSeconds * 1000,
    },
  };
}

function fallbackOf(f: AgentFallback): ServiceFallback {
  return {
    ...(f.chatModel ? { chatModel: f.chatModel } : {}),
    ...(f.ttsModel ? { ttsModel: f.ttsModel } : {}),
    ...(f.voice ? { voice: f.voice } : {}),
    ...(f.asrModel ? { asrModel: f.asrModel } : {}),
    ...(f.baseUrl && f.apiKey ? { endpoint: { baseUrl: f.baseUrl, apiKey: f.apiKey } } : {}),
  };
}

type Service = Pick<
  Config["service"],
  "chatModel" | "ttsModel" | "asrModel" | "voice" | "language" | "hotwords"
>;

/** The service models and voice of `agent`, the service section's where it sets none. */
export function modelsOf(agent: Agent, service: Service): ServiceModels {
  return {
    chatModel: agent.chatModel ?? service.chatModel,
    ttsModel: agent.ttsModel ?? service.ttsModel,
    asrModel: agent.asrModel ?? service.asrModel,
    voice: agent.voice ?? service.voice,
    language: agent.language ?? service.language,
    hotwords: agent.hotwords ?? service.hotwords,
  };
}

/**
 * The deadlines an agent gets where it sets none: the embedded local service's, unless that
 * service plays a hosted one's latency or faults (then it stands for the hosted service).
 */
export function serviceDeadlinesFor(config: Pick<Config, "service" | "local">): ServiceDeadlines {
  const { latency, faults } = config.local;
  const plays =
    latency.asrMs + latency.chatMs + latency.ttsMs > 0 ||
    faults.chat503 + faults.asr503 + faults.ttsCut + faults.chatStall > 0;
  const embedded = usesLocalService(config);
  return embedded && !plays ? EMBEDDED_SERVICE_DEADLINES : DEFAULT_SERVICE_DEADLINES;
}

/**
 * The session's configuration of `agent`, its templates filled by `t` (no templates: pass none);
 * `deadlines`: the defaults where the agent sets none (the service's: see serviceDeadlinesFor).
 */
export function sessionConfigOf(
  agent: Agent,
  t?: TemplateRenderer,
  deadlines: ServiceDeadlines = DEFAULT_SERVICE_DEADLINES,
): SessionConfig {
  const fill = (text: string) => (t ? t.render(text) : text);
  const fillUrl = (text: string) => (t ? t.render(text, encodeURIComponent) : text);
  const httpTools: HttpToolConfig[] = agent.httpTools.map((tool) => ({
    ...tool,
    url: fillUrl(tool.url),
    ...(tool.headers ? { headers: mapValues(tool.headers, fill) } : {}),
    ...(tool.body ? { body: mapValues(tool.body, fill) } : {}),
  }));
  return {
    ...DEFAULT_SESSION_CONFIG,
    ...(agent.systemPrompt ? { systemPrompt: fill(agent.systemPrompt) } : {}),
    ...(agent.greeting ? { greeting: fill(agent.greeting) } : {}),
    ...(agent.transferTarget ? { transferTarget: fill(agent.transferTarget) } : {}),
    transferMode: agent.transferMode,
    warmTransfer: {
      answerMs: agent.transferAnswerSeconds * 1000,
      ...(agent.transferHoldAudio ? { holdAudio: agent.transferHoldAudio } : {}),
      ...(agent.transferHoldLine ? { holdLine: fill(agent.transferHoldLine) } : {}),
      ...(agent.transferBrief ? { brief: fill(agent.transferBrief) } : {}),
    },
    ...(agent.apologyText ? { apologyText: fill(agent.apologyText) } : {}),
    ...(agent.askAgainText ? { askAgainText: fill(agent.askAgainText) } : {}),
    ...(agent.waitingCue
      ? { waitingCue: { text: fill(agent.waitingCue), afterMs: agent.waitingCueAfterMs } }
      : {}),
    turn: turnTakingFrom(agent),
    deadlines: { ...deadlines, ...definedOf(agent.deadlines) },
    repromptAfterMs: agent.repromptAfterMs,
    maxReprompts: agent.maxReprompts,
    maxCallMs: agent.maxCallSeconds * 1000,
    httpTools,
    ...(agent.handoffs.length ? { handoffs: { agents: agent.handoffs, history: agent.handoffHistory } } : {}),
    ...(agent.handoffLine ? { handoffLine: fill(agent.handoffLine) } : {}),
    ...(agent.ivr ? { ivr: { goal: fill(agent.ivr.goal) } } : {}),
    history: {
      ...DEFAULT_SESSION_CONFIG.history,
      maxTokens: agent.historyTokens,
      digestTokens: agent.historyDigestTokens,
    },
  };
}

function mapValues(record: Record<string, string>, f: (v: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
}

/** The settings given a value (an unset optional key leaves the default in place). */
function definedOf<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
