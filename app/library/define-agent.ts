// `defineAgent()`: an agent as the config file writes one (the one agent model, agents/schema.ts),
// plus what only code can hold: tools that run in-process and hooks on the call's life.
import type { AgentCode, CallStartDecision, CallTurn, LiveCall } from "../../src/agents/code.ts";
import type { CallStartRequest } from "../../src/agents/webhook.ts";
import type { AgentInput } from "../../src/config/agent.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import type { Tool } from "./tool.ts";

/** What an agent's code adds to its settings. */
export interface AgentHooks {
  /** Tools the model may call, beside the agent's `httpTools`. */
  tools?: readonly Tool[];
  /**
   * Before the call is answered: may return variables, overrides of single settings, another agent
   * (by name), or a rejection, exactly as the call-start webhook answers (in place of it).
   */
  onCallStart?(
    call: CallStartRequest,
  ): CallStartDecision | undefined | Promise<CallStartDecision | undefined>;
  /** After each spoken turn, the caller's or the agent's; `call` acts on the call (sendDtmf, handoff, transfer). */
  onTurn?(turn: CallTurn, call: LiveCall): void | Promise<void>;
  /** Once the call is over (with its analysis, when the agent has an analysis plan). */
  onCallEnd?(record: CallRecord): void | Promise<void>;
}

/** An agent's settings (as in the config file) and its code. */
export type AgentDefinition = AgentInput & AgentHooks;

/** An agent made by `defineAgent()`, for createBridge's `agent` or `agents`. */
export type DefinedAgent = AgentDefinition & { readonly kind: "voice-bridge.agent" };

const BUILT_IN = new Set(["end_call", "transfer_call", "handoff", "send_dtmf"]);

export function defineAgent(definition: AgentDefinition): DefinedAgent {
  checkToolNames(definition);
  return { ...definition, kind: "voice-bridge.agent" };
}

/** The model calls tools by name: one name, one tool. */
function checkToolNames(agent: AgentDefinition): void {
  const names = new Set<string>();
  for (const t of [...(agent.tools ?? []), ...(agent.httpTools ?? [])]) {
    if (BUILT_IN.has(t.name)) throw new TypeError(`tool "${t.name}": the name of a built-in tool`);
    if (names.has(t.name)) throw new TypeError(`tool "${t.name}": two tools of the agent have this name`);
    names.add(t.name);
  }
}

/** An agent's settings and its code, apart (the settings go through the config's checks). */
export function splitAgent(agent: AgentDefinition | DefinedAgent): {
  settings: Record<string, unknown>;
  code: AgentCode;
} {
  checkToolNames(agent);
  const { tools, onCallStart, onTurn, onCallEnd, ...rest } = agent;
  const { kind: _kind, ...settings } = rest as typeof rest & { kind?: string };
  const code: AgentCode = {
    ...(tools ? { tools } : {}),
    ...(onCallStart ? { onCallStart: (c: CallStartRequest) => onCallStart.call(agent, c) } : {}),
    ...(onTurn ? { onTurn: (t: CallTurn, c: LiveCall) => onTurn.call(agent, t, c) } : {}),
    ...(onCallEnd ? { onCallEnd: (r: CallRecord) => onCallEnd.call(agent, r) } : {}),
  };
  return { settings, code };
}
