// How a call ended, in a few words for counting and filtering (metrics, GET /calls, reports),
// from the free-text end reason the session records ("agent: caller said goodbye", …).

export const CALL_OUTCOMES = [
  "agent_hangup",
  "transferred",
  "caller_silent",
  "max_call_duration",
  "caller_hangup",
  "instance_lost",
  "unanswered",
] as const;

export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** End reasons of outbound calls nobody answered start with this (busy, no answer, failed, canceled). */
export const UNANSWERED = "unanswered";

/** The end reason another bridge writes for a call whose instance died without ending it. */
export const INSTANCE_LOST = "instance lost";

export function outcomeOf(reason: string): CallOutcome {
  if (reason.startsWith("agent")) return "agent_hangup";
  if (reason.startsWith("transferred")) return "transferred";
  if (reason === "caller silent") return "caller_silent";
  if (reason === "max call duration") return "max_call_duration";
  if (reason === INSTANCE_LOST) return "instance_lost";
  if (reason.startsWith(UNANSWERED)) return "unanswered";
  return "caller_hangup";
}
