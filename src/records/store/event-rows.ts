// What one call event changes in the tables, the same for every engine: the call's row (started,
// a turn more, ended), the turn's row with its metrics and its words for search. Rows read back
// become summaries here too, so both engines answer GET /calls alike.

import type { CallEvent, DialOutcome } from "../call-record.ts";
import { INSTANCE_LOST } from "../outcome.ts";
import type { CallPage, CallSummary } from "./call-store.ts";

/** A turn as the `turns` table holds it. */
export interface TurnRow {
  role: "user" | "assistant";
  at: string;
  text: string;
  source: string | null;
  speaker: string | null;
  generated: string | null;
  interrupted: number | null;
  tools: string | null;
  error: string | null;
  eou_delay_ms: number | null;
  asr_ms: number | null;
  llm_ttft_ms: number | null;
  tts_first_audio_ms: number | null;
  voice_to_voice_ms: number | null;
  barge_in_ms: number | null;
}

export const TURN_COLUMNS = [
  "role",
  "at",
  "text",
  "source",
  "speaker",
  "generated",
  "interrupted",
  "tools",
  "error",
  "eou_delay_ms",
  "asr_ms",
  "llm_ttft_ms",
  "tts_first_audio_ms",
  "voice_to_voice_ms",
  "barge_in_ms",
] as const satisfies readonly (keyof TurnRow)[];

const NO_METRICS = {
  eou_delay_ms: null,
  asr_ms: null,
  llm_ttft_ms: null,
  tts_first_audio_ms: null,
  voice_to_voice_ms: null,
  barge_in_ms: null,
};

/** The turn an event is, if it is one (the caller's words or the agent's reply). */
export function turnRowOf(event: CallEvent): TurnRow | undefined {
  if (event.type === "user")
    return {
      role: "user",
      at: event.at,
      text: event.text,
      source: event.source,
      speaker: event.speaker ?? null,
      generated: null,
      interrupted: null,
      tools: null,
      error: null,
      ...NO_METRICS,
    };
  if (event.type !== "assistant") return undefined;
  const m = event.metrics;
  return {
    role: "assistant",
    at: event.at,
    text: event.heard,
    source: null,
    speaker: null,
    generated: event.generated,
    interrupted: event.interrupted ? 1 : 0,
    tools: JSON.stringify(event.toolCalls.map((c) => c.name)),
    error: event.error ?? null,
    eou_delay_ms: m.eouDelayMs ?? null,
    asr_ms: m.asrMs ?? null,
    llm_ttft_ms: m.llmTtftMs ?? null,
    tts_first_audio_ms: m.ttsFirstAudioMs ?? null,
    voice_to_voice_ms: m.voiceToVoiceMs ?? null,
    barge_in_ms: m.bargeInMs ?? null,
  };
}

/** The words a turn adds to the search (what the caller said; what the agent generated). */
export function turnWords(event: CallEvent): string | undefined {
  if (event.type === "user") return event.text;
  if (event.type === "assistant") return event.generated;
  return undefined;
}

/**
 * The new call row's values for a call-start event, in the order both engines' INSERT names them:
 * call_id, instance, transport, from_number, to_number, agent, started_at, direction.
 */
export function startValues(
  callId: string,
  instance: string,
  event: Extract<CallEvent, { type: "call-start" }>,
) {
  return [
    callId,
    instance,
    event.transport,
    event.from ?? null,
    event.to ?? null,
    event.agent ?? null,
    iso(event.at),
    event.direction ?? "inbound",
  ] as const;
}

/** The call row's end columns for a call-end event. */
export function endColumns(event: Extract<CallEvent, { type: "call-end" }>) {
  return {
    ended_at: iso(event.at),
    end_reason: event.reason,
    outcome: event.outcome,
    duration_ms: event.durationMs,
  };
}

/** The call row's dialling columns for an outbound call's dial event. */
export function dialColumns(event: Extract<CallEvent, { type: "dial" }>) {
  return {
    dial_outcome: event.outcome,
    dial_reason: event.reason ?? null,
    amd: event.amd ? JSON.stringify(event.amd) : null,
  };
}

/** Times in one format (Date.toISOString), so that text order is time order in every engine. */
export function iso(at: string): string {
  const t = Date.parse(at);
  return Number.isNaN(t) ? at : new Date(t).toISOString();
}

export const SUMMARY_COLUMNS =
  "call_id, instance, transport, direction, from_number, to_number, agent, started_at, ended_at, end_reason, outcome, duration_ms, turns, recording_instance, recording_path, dial_outcome, dial_reason";

export interface CallRow {
  call_id: string;
  instance: string;
  transport: string;
  direction: string;
  from_number: string | null;
  to_number: string | null;
  agent: string | null;
  started_at: string;
  ended_at: string | null;
  end_reason: string | null;
  outcome: string | null;
  duration_ms: number | string | null;
  turns: number | string;
  recording_instance: string | null;
  recording_path: string | null;
  dial_outcome: string | null;
  dial_reason: string | null;
}

export function summaryOfRow(r: CallRow): CallSummary {
  return {
    callId: r.call_id,
    instance: r.instance,
    transport: r.transport,
    direction: r.direction,
    ...(r.from_number !== null ? { from: r.from_number } : {}),
    ...(r.to_number !== null ? { to: r.to_number } : {}),
    ...(r.agent !== null ? { agent: r.agent } : {}),
    startedAt: r.started_at,
    ...(r.ended_at !== null ? { endedAt: r.ended_at } : {}),
    ...(r.end_reason !== null ? { endReason: r.end_reason } : {}),
    ...(r.outcome !== null ? { outcome: r.outcome as CallSummary["outcome"] & string } : {}),
    ...(r.duration_ms !== null ? { durationMs: Number(r.duration_ms) } : {}),
    turns: Number(r.turns),
    ...(r.dial_outcome !== null ? { dialOutcome: r.dial_outcome as DialOutcome } : {}),
    ...(r.dial_reason !== null ? { dialReason: r.dial_reason } : {}),
    ...(r.recording_path !== null
      ? { recording: { instance: r.recording_instance ?? r.instance, path: r.recording_path } }
      : {}),
  };
}

/** A page from rows fetched with one more than `limit`: that one says another page follows. */
export function pageOf(rows: CallRow[], limit: number): CallPage {
  const calls = rows.slice(0, limit).map(summaryOfRow);
  const last = calls[calls.length - 1];
  return rows.length > limit && last
    ? { calls, next: { startedAt: last.startedAt, callId: last.callId } }
    : { calls };
}

/** The call-end another run or bridge writes for a call whose instance died without ending it. */
export function lostEnd(startedAt: string, now: Date): Extract<CallEvent, { type: "call-end" }> {
  const durationMs = Math.max(0, now.getTime() - Date.parse(startedAt));
  const { reason, outcome } = INSTANCE_LOST;
  return { type: "call-end", at: now.toISOString(), reason, outcome, durationMs };
}
