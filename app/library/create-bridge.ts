// `createBridge()`: the bridge as a library. The options are the config file's (one schema:
// config.ts, checked the same way, environment variables applied over them as over a file), with
// agents that may carry code (defineAgent). The CLI's `start` runs the same bridge (runBridge).
import { EventEmitter } from "node:events";
import type { z } from "zod";
import type { AgentCode, CallTurn, LiveCall } from "../../src/agents/code.ts";
import { type Config, type configSchema, loadConfig } from "../../src/config/config.ts";
import { createLogger, type Logger } from "../../src/core/log.ts";
import type { DialAccepted, DialBody } from "../../src/outbound/request.ts";
import { type CallEvent, type CallRecord, turnOf } from "../../src/records/call-record.ts";
import { transferAction } from "../../src/session/code-tools.ts";
import type { Entrances } from "../banner.ts";
import { type Bridge, startBridge } from "../bridge/start.ts";
import type { CallEventMessage } from "../console/live-events.ts";
import type { ReloadResult } from "../reload.ts";
import { type Campaigns, campaignsOf } from "./campaigns.ts";
import { type AgentDefinition, type AgentHooks, splitAgent } from "./define-agent.ts";
import { dial } from "./dial.ts";

type ConfigInput = z.input<typeof configSchema>;

/** createBridge's options: the config file's sections, with agents that may carry code. */
export type BridgeOptions = Omit<ConfigInput, "agent" | "agents"> & {
  /** The agent named `default` (plus where call records and recordings go), as `agent:` in the file. */
  agent?: NonNullable<ConfigInput["agent"]> & AgentHooks;
  /** Named agents (route targets), as `agents:` in the file; defineAgent() or plain settings. */
  agents?: Record<string, AgentDefinition>;
  /** Environment variables applied over the options, as over a config file (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
};

/** What a running bridge tells its listeners: the live console's feed messages (console/live-events.ts), and turns and records as GET /calls/:id has them. */
export interface BridgeEvents {
  /** Every event of every call's record, as it is written (call-start, turns, barge-ins, notes, call-end). */
  event: [CallEventMessage];
  /** A call was answered by an agent. */
  "call-start": [CallEventMessage & { event: Extract<CallEvent, { type: "call-start" }> }];
  /** A spoken turn, the caller's or the agent's. */
  turn: [CallTurn];
  /** A call is over (with its analysis, when its agent has a plan): its whole record. */
  "call-end": [CallRecord];
}

export interface VoiceBridge extends EventEmitter<BridgeEvents> {
  /** Where the bridge listens (http://host:port): Twilio's webhooks, the console, /calls. */
  readonly url: string;
  /** Where people and programs reach the agent (console, Twilio, SIP, AudioSocket). */
  readonly entrances: Entrances;
  /**
   * The token the console, /calls and recordings ask for (`Authorization: Bearer …`): the one
   * configured, else the one the bridge made and keeps in its data dir; undefined when `off`.
   */
  readonly token: string | undefined;
  /** The agents' names, `default` first. */
  readonly agents: string[];
  readonly activeCalls: number;
  /**
   * A call's record so far, when memory holds it whole (live and recent calls; a call past its
   * first 150 events, and older ones: GET /calls/:id, or the `call-end` event, read the store).
   */
  record(callId: string): CallRecord | undefined;
  /**
   * Places a call: the body of POST /calls (`to`, `via`, and optionally `agent`, `variables`,
   * `machineDetection`, `voicemailMessage`...). Resolves with its id once its record exists (the
   * call then rings; `call-end` and the agent's onCallEnd tell its `dialOutcome`); rejects with a
   * DialError naming the field at fault, or saying the limits or a shutdown refused it.
   */
  dial(request: DialBody): Promise<DialAccepted>;
  /** Cancels a ringing call the bridge placed, or hangs it up once answered; false when no such call is live. */
  hangUp(callId: string): boolean;
  /** Call lists worked through at a pace, within calling hours, retried (docs/campaigns.md): as /campaigns. */
  readonly campaigns: Campaigns;
  /** Reads the configuration again (the CLI's bridge: its file and environment). */
  reload(): ReloadResult;
  /** Stops taking calls, lets live ones finish (up to `timeoutMs`, default 30 s), then closes. */
  drain(timeoutMs?: number): Promise<void>;
  /** Closes now: live calls are ended. */
  close(): Promise<void>;
}

/** Starts a bridge with these options; rejects with a ConfigError naming each wrong setting. */
export async function createBridge(options: BridgeOptions = {}): Promise<VoiceBridge> {
  const { env = process.env, agent, agents, ...sections } = options;
  const code = new Map<string, AgentCode>();
  const tree: Record<string, unknown> = { ...sections };
  if (agent) {
    const split = splitAgent(agent);
    tree.agent = split.settings;
    code.set("default", split.code);
  }
  if (agents) {
    const named: Record<string, unknown> = {};
    for (const [name, a] of Object.entries(agents)) {
      const split = splitAgent(a);
      named[name] = split.settings;
      code.set(name, split.code);
    }
    tree.agents = named;
  }
  const config = loadConfig({ env: { ...env }, given: { tree, name: "createBridge options" } });
  return runBridge(config, { log: createLogger(config.log), code, env: { ...env } });
}

export interface RunOptions {
  log: Logger;
  /** The tools and hooks of agents defined in code, by agent name. */
  code?: ReadonlyMap<string, AgentCode>;
  /** How reload() reads the configuration again. */
  readConfig?: () => Config;
  /** Says how to reach the agent once the bridge is up (default: one log line). */
  announce?: (entrances: Entrances) => void;
  /** What `${NAME}` in MCP servers' settings reads (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The bridge of a validated configuration (createBridge's, and the CLI's `start`). */
export async function runBridge(config: Config, opts: RunOptions): Promise<VoiceBridge> {
  const code = opts.code ?? new Map<string, AgentCode>();
  const inner = await startBridge(config, opts.log, {
    agentCode: code,
    ...(opts.readConfig ? { readConfig: opts.readConfig } : {}),
    ...(opts.announce ? { announce: opts.announce } : {}),
    ...(opts.env ? { env: opts.env } : {}),
  });
  return new RunningBridge(inner, config, code, opts.log);
}

/** Where a service API client reaches the service a bridge's calls speak through. */
export interface ServiceEndpoint {
  baseURL: string | undefined;
  apiKey: string | undefined;
}

/**
 * The service a bridge's calls speak through: its embedded local service, or the hosted one it was
 * given (the agent tests speak the caller's lines and judge with it). Undefined for another kind of bridge.
 */
export function serviceOf(bridge: VoiceBridge): ServiceEndpoint | undefined {
  return bridge instanceof RunningBridge ? bridge.service : undefined;
}

class RunningBridge extends EventEmitter<BridgeEvents> implements VoiceBridge {
  readonly #inner: Bridge;
  readonly #code: ReadonlyMap<string, AgentCode>;
  readonly #log: Logger;
  #config: Config;
  /** The agent of each live call (from its call-start event). */
  readonly #agentOf = new Map<string, string>();

  constructor(inner: Bridge, config: Config, code: ReadonlyMap<string, AgentCode>, log: Logger) {
    super();
    this.#inner = inner;
    this.#config = config;
    this.#code = code;
    this.#log = log.child({ component: "api" });
    inner.transcripts.observe((callId, event) => this.#onEvent(callId, event));
  }

  get url(): string {
    return this.#inner.url;
  }
  get entrances(): Entrances {
    return this.#inner.entrances;
  }
  get token(): string | undefined {
    return this.#inner.token;
  }
  get agents(): string[] {
    return this.#inner.agents;
  }
  get activeCalls(): number {
    return this.#inner.activeCalls;
  }

  record(callId: string): CallRecord | undefined {
    return this.#inner.transcripts.get(callId);
  }

  get service(): ServiceEndpoint {
    const local = this.#inner.localService;
    if (local) return { baseURL: local.url, apiKey: local.apiKeys[0] };
    return { baseURL: this.#config.service.baseUrl, apiKey: this.#config.service.apiKey };
  }

  dial(request: DialBody): Promise<DialAccepted> {
    return dial(this.#inner.outbound, request);
  }

  hangUp(callId: string): boolean {
    return this.#inner.outbound.cancel(callId) !== undefined;
  }

  get campaigns(): Campaigns {
    return campaignsOf(() => this.#inner.campaigns?.control);
  }

  reload(): ReloadResult {
    return this.#inner.reload();
  }

  drain(timeoutMs = 30_000): Promise<void> {
    return this.#inner.close(timeoutMs);
  }

  close(): Promise<void> {
    return this.#inner.close(0);
  }

  #onEvent(callId: string, event: CallEvent): void {
    const instance = this.#inner.instance;
    this.#emitSafely("event", { type: "event", callId, instance, event });
    if (event.type === "call-start") {
      const agent = event.agent ?? "default";
      this.#agentOf.set(callId, agent);
      this.#emitSafely("call-start", { type: "event", callId, instance, event });
      return;
    }
    // Handed to another agent: its hooks hear the call's turns and end from then on.
    if (event.type === "handoff" && this.#agentOf.has(callId)) this.#agentOf.set(callId, event.to);
    const agent = this.#agentOf.get(callId);
    if (agent === undefined) return;
    const code = this.#code.get(agent);
    if (event.type === "user" || event.type === "assistant") {
      const callTurn: CallTurn = { ...turnOf(event)!, callId };
      this.#emitSafely("turn", callTurn);
      this.#hook("onTurn", callId, () => code?.onTurn?.(callTurn, this.#liveCall(callId)));
      return;
    }
    // The call's end, or its analysis when one comes after it.
    const analysed = this.#hasAnalysis(agent);
    if ((event.type === "call-end" && !analysed) || event.type === "analysis") {
      this.#agentOf.delete(callId);
      const ended = (record: CallRecord | undefined) => {
        if (!record) return;
        this.#emitSafely("call-end", record);
        this.#hook("onCallEnd", callId, () => code?.onCallEnd?.(record));
      };
      // A long call's first events are read back from the store (memory holds its latest).
      const whole = this.record(callId);
      if (whole) ended(whole);
      else
        void this.#inner.transcripts
          .read(callId)
          .then(ended, (err: Error) =>
            this.#log.error({ err, callId }, "call-end: the store could not give the call's record"),
          );
    }
  }

  /** What a hook may do to the call; it acts on the session as it is when asked. */
  #liveCall(callId: string): LiveCall {
    const inner = this.#inner;
    const handoffs = (agent: string | undefined) =>
      (agent === "default" ? this.#config.agent : this.#config.agents[agent ?? ""])?.handoffs ?? [];
    const agentOf = this.#agentOf;
    return {
      id: callId,
      sendDtmf(digits) {
        const session = inner.liveCall(callId);
        return session ? session.sendDtmf(digits) : Promise.reject(new Error(`call ${callId} is over`));
      },
      handoff(agent, reason = "handed on by the agent's code") {
        const session = inner.liveCall(callId);
        if (!session) throw new Error(`call ${callId} is over`);
        const from = agentOf.get(callId);
        const may = handoffs(from);
        if (!may.includes(agent))
          throw new TypeError(
            `handoff: agent "${from}" may hand calls to ${may.join(", ") || "no agent"}, not "${agent}"`,
          );
        session.handOff(agent, reason);
      },
      transfer(target) {
        const action = transferAction(target);
        const session = inner.liveCall(callId);
        if (!session) throw new Error(`call ${callId} is over`);
        session.transfer(action);
      },
    };
  }

  #hasAnalysis(agent: string): boolean {
    const settings = agent === "default" ? this.#config.agent : this.#config.agents[agent];
    return settings?.analysis !== undefined;
  }

  /** A listener's mistake must not reach the call path that wrote the event. */
  #emitSafely<K extends keyof BridgeEvents>(name: K, ...args: BridgeEvents[K]): void {
    try {
      (this.emit as (n: K, ...a: BridgeEvents[K]) => boolean)(name, ...args);
    } catch (err) {
      this.#log.error({ err, event: name }, "a listener of the bridge's events threw");
    }
  }

  #hook(name: string, callId: string, run: () => void | Promise<void> | undefined): void {
    const fail = (err: unknown) => this.#log.error({ err, callId, hook: name }, `the agent's ${name} threw`);
    try {
      void Promise.resolve(run()).catch(fail);
    } catch (err) {
      fail(err);
    }
  }
}
