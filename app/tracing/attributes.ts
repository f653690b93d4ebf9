// The names the call traces use: span names, and attributes under `voice.` for what no semantic
// convention names (a call, its turns), the GenAI conventions' for tool calls. Those are still
// "incubating", so they are copied here rather than imported (as the conventions package advises).
import type { TurnMetrics } from "../../src/records/call-record.ts";

export const SPAN = {
  call: "call",
  turn: "turn",
  endOfTurn: "end of turn",
  recognition: "recognition",
  firstToken: "first token",
  firstAudio: "first audio",
  /** `execute_tool {name}`, as the GenAI conventions name a tool call. */
  tool: (name: string) => `execute_tool ${name}`,
} as const;

export const ATTR = {
  callId: "voice.call.id",
  agent: "voice.agent",
  transport: "voice.transport",
  direction: "voice.call.direction",
  /** How the call ended (agent_hangup, caller_hangup, transferred, …), set at its end. */
  outcome: "voice.call.outcome",
  endReason: "voice.call.end_reason",
  turns: "voice.call.turns",
  /** The turn's number in its call, from 1. */
  turnIndex: "voice.turn.index",
  /** `reply` (the model answers) or `fixed` (greeting, re-prompt, goodbye). */
  turnKind: "voice.turn.kind",
  /** `speech` or `dtmf`, for a reply to the caller. */
  turnSource: "voice.turn.source",
  /** Started before the caller's turn was confirmed. */
  turnHeld: "voice.turn.held",
  /** heard, interrupted, cancelled (dropped unheard), failed, call_ended. */
  turnOutcome: "voice.turn.outcome",
  /** A stage (end of turn, first token, first audio) reached its end before the turn did. */
  completed: "voice.completed",
  toolKind: "voice.tool.kind",
  /** How a tool call ended: result, end-call, transfer, abandoned (its turn ended first). */
  toolOutcome: "voice.tool.outcome",
  genAiOperation: "gen_ai.operation.name",
  genAiToolName: "gen_ai.tool.name",
  genAiToolCallId: "gen_ai.tool.call.id",
} as const;

/** A turn's figure (a key of TurnMetrics: llmTtftMs) as an attribute: voice.turn.llm_ttft_ms. */
export function metricAttribute(key: keyof TurnMetrics): string {
  return `voice.turn.${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
}
