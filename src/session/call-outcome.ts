// How a call ended, in a few words for counting and filtering (metrics, GET /calls, reports),
// from the free-text end reason the session records ("agent: caller said goodbye", …).

export type CallOutcome =
  | "agent_hangup"
  | "transferred"
  | "caller_silent"
  | "max_call_duration"
  | "caller_hangup";

export function outcomeOf(reason: string): CallOutcome {
  if (reason.startsWith("agent")) return "agent_hangup";
  if (reason.startsWith("transferred")) return "transferred";
  if (reason === "caller silent") return "caller_silent";
  if (reason === "max call duration") return "max_call_duration";
  return "caller_hangup";
}
