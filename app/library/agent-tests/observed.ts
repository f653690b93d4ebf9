// What a scenario's call showed, gathered once for the expectations to read: the bridge's record
// (the agent's turns, its tool calls and their arguments, the outcome, who answered), the
// transfers Twilio's REST API was asked for, and the times the caller measured on the line.
import type { CallRecord } from "../../../src/records/call-record.ts";
import type { CallOutcome } from "../../../src/records/outcome.ts";
import type { SimEvent, SimResult } from "../../../tools/twilio-sim/simulate.ts";

export interface AgentTurn {
  /** 1 for the agent's first turn. */
  n: number;
  /** What the agent said (generated in full, even when the caller cut it short). */
  text: string;
}

export interface ToolCallSeen {
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
}

export interface LineAnswer {
  /** The caller's line in words. */
  line: string;
  /** From the end of the line (its last speech, or last key) to the agent's first audio after it, ms. */
  answerMs: number | null;
}

export interface ObservedCall {
  /** The bridge refused the call before answering it (onCallStart or the webhook rejected it). */
  rejected: boolean;
  /** The agent that took it. */
  agent: string | undefined;
  turns: AgentTurn[];
  toolCalls: ToolCallSeen[];
  outcome: CallOutcome | undefined;
  endReason: string | undefined;
  /** Numbers or SIP URIs the call was transferred to (through Twilio's REST API). */
  transfers: string[];
  answers: LineAnswer[];
  /** The agent's first audio, ms from the call's start. */
  firstAudioMs: number | null;
  record: CallRecord | undefined;
}

/** Where each of the caller's lines ended, from the simulator's events and its measure of speech. */
function lineEnds(sim: SimResult, events: readonly SimEvent[]): Array<number | undefined> {
  const starts = events.filter((e) => e.kind === "say").map((e) => e.atMs);
  return starts.map((start, i) => {
    const next = starts[i + 1] ?? Number.POSITIVE_INFINITY;
    const within = (ms: number) => ms >= start && ms < next;
    const keys = events.filter((e) => e.kind === "dtmf" && within(e.atMs)).map((e) => e.atMs);
    const speech = sim.turns.filter((t) => t.source === "say" && within(t.startMs)).map((t) => t.endMs);
    const all = [...keys, ...speech];
    return all.length ? Math.max(...all) : undefined;
  });
}

export function observe(
  record: CallRecord | undefined,
  sim: SimResult | undefined,
  events: readonly SimEvent[],
  lines: readonly string[],
  transfers: string[],
): ObservedCall {
  const ends = sim ? lineEnds(sim, events) : [];
  const audio = sim?.mediaReceivedMs ?? [];
  const end = record?.events.findLast((e) => e.type === "call-end");
  return {
    rejected: sim === undefined,
    agent: record ? (record.agent ?? "default") : undefined,
    turns: (record?.turns ?? [])
      .flatMap((t) => (t.role === "assistant" ? [t.generated] : []))
      .map((text, i) => ({ n: i + 1, text })),
    toolCalls: (record?.events ?? []).flatMap((e) => (e.type === "assistant" ? e.toolCalls : [])),
    outcome: end?.type === "call-end" ? end.outcome : undefined,
    endReason: end?.type === "call-end" ? end.reason : undefined,
    transfers,
    answers: lines.map((line, i) => {
      const at = ends[i];
      const first = at === undefined ? undefined : audio.find((ms) => ms >= at);
      return { line, answerMs: at === undefined || first === undefined ? null : Math.round(first - at) };
    }),
    firstAudioMs: audio.length ? Math.round(audio[0]!) : null,
    record,
  };
}
