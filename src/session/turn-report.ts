// What a call's session writes: its start, and what an agent turn leaves behind: its event in the
// call's record (what was generated, what the caller heard, the tools, the figures) and its line
// in the log. One shape for a model's reply and for the apology, so the record reads the same
// whichever the caller heard.
import type { Logger } from "../core/log.ts";
import type { CallEvent, TurnMetrics } from "../records/call-record.ts";
import type { AgentTurnResult } from "./agent-turn.ts";

type AssistantEvent = Extract<CallEvent, { type: "assistant" }>;

/** The call-start event of a call answered by `agent` (its record's first). */
export function callStartEvent(
  call: { callId: string; transport: string; from?: string; to?: string },
  agent: string | undefined,
): CallEvent {
  return {
    type: "call-start",
    at: new Date().toISOString(),
    callId: call.callId,
    transport: call.transport,
    ...(call.from ? { from: call.from } : {}),
    ...(call.to ? { to: call.to } : {}),
    ...(agent ? { agent } : {}),
  };
}

/** The record's event of a finished (not cancelled) agent turn. */
export function assistantEvent(r: AgentTurnResult, metrics: TurnMetrics): AssistantEvent {
  return {
    type: "assistant",
    at: new Date().toISOString(),
    generated: r.generated,
    heard: r.heard,
    interrupted: r.interrupted,
    toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
    metrics,
    ...(r.error ? { error: r.error } : {}),
  };
}

/** The apology as the record keeps it: heard in full, no figures, the fault that caused it. */
export function apologyEvent(text: string, why: string): AssistantEvent {
  return {
    type: "assistant",
    at: new Date().toISOString(),
    generated: text,
    heard: text,
    interrupted: false,
    toolCalls: [],
    metrics: {},
    error: why,
  };
}

/** The turn's log line: `agent said`, or `agent interrupted` with what was heard. */
export function logAgentTurn(log: Logger, r: AgentTurnResult, metrics: TurnMetrics, dryRuns: number): void {
  log.info(
    {
      heard: r.heard,
      interrupted: r.interrupted || undefined,
      tools: r.toolCalls.map((c) => c.name),
      ...metrics,
      ...(dryRuns ? { audioDryRuns: dryRuns } : {}),
      ...(r.error ? { error: r.error } : {}),
    },
    r.interrupted ? "agent interrupted" : "agent said",
  );
}
