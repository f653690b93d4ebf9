// The figures filed with each agent turn: how long the end of the caller's turn took to
// confirm, and the pipeline's stages from there to the first audio the caller heard.

import type { TurnMetrics } from "../records/call-record.ts";
import type { AgentTurn, AgentTurnResult } from "./agent-turn.ts";
import type { ChatRecovery } from "./resilience/request-signals.ts";

/**
 * What of the turn the figures read. `chatRecovery`: the hedges and fallbacks of its chat requests
 * (resilience/request-signals.ts: chatRecovery(signal) of the signal the turn's requests ran under).
 */
export type MeasuredTurn = Pick<AgentTurn, "timings" | "chatRequests"> & {
  readonly ttsReopens?: number;
} & {
  readonly chatRecovery?: ChatRecovery | undefined;
};

/** What of the caller's turn the figures need: when it ended, was confirmed, was recognized. */
export interface AnsweredTurn {
  speechEndAt: number;
  /** When the detector reported the end of speech (speechEndAt is when the speech ended). */
  detectedAt?: number;
  /** When the words were sent for recognition: the upload's end, which may come before detectedAt. */
  askedAt?: number;
  confirmedAt?: number;
  asrMs?: number;
}

export function turnMetrics(
  turn: MeasuredTurn,
  job: AnsweredTurn | undefined,
  r: AgentTurnResult,
  interruptedBy: { startAt: number; clearedAt: number } | undefined,
): TurnMetrics {
  const t = turn.timings;
  const m: TurnMetrics = {};
  const confirmedAt = job?.confirmedAt;
  if (job && confirmedAt !== undefined) m.eouDelayMs = Math.round(confirmedAt - job.speechEndAt);
  if (job?.asrMs !== undefined) m.asrMs = Math.round(job.asrMs);
  if (t.chatStartAt !== undefined && t.firstTokenAt !== undefined)
    m.llmTtftMs = Math.round(t.firstTokenAt - t.chatStartAt);
  if (t.firstTextSentAt !== undefined && t.firstAudioAt !== undefined) {
    m.ttsFirstAudioMs = Math.round(t.firstAudioAt - t.firstTextSentAt);
  }
  if (job && t.firstPlayAt !== undefined) m.voiceToVoiceMs = Math.round(t.firstPlayAt - job.speechEndAt);
  const sentAt = job?.askedAt ?? job?.detectedAt;
  if (job && sentAt !== undefined) m.detectMs = Math.round(sentAt - job.speechEndAt);
  if (m.voiceToVoiceMs !== undefined) {
    const service = (m.asrMs ?? 0) + (m.llmTtftMs ?? 0) + (m.ttsFirstAudioMs ?? 0);
    m.waitMs = Math.max(0, m.voiceToVoiceMs - (m.detectMs ?? 0) - service);
  }
  if (turn.chatRequests > 0) m.chatRequests = turn.chatRequests;
  const recovery = turn.chatRecovery;
  if (recovery?.hedgedRequests) m.hedgedRequests = recovery.hedgedRequests;
  if (recovery?.fallbacks) m.fallbacks = recovery.fallbacks;
  if (turn.ttsReopens) m.ttsReopens = turn.ttsReopens;
  if (r.interrupted && interruptedBy)
    m.bargeInMs = Math.round(interruptedBy.clearedAt - interruptedBy.startAt);
  return m;
}
