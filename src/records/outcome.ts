// How a call ended, in a few words for counting and filtering (metrics, GET /calls, reports, the
// console): a typed value set by whoever ends the call, recorded with its end, never read back out
// of the human-readable reason (a reason nobody foresaw would be counted as something it is not).

export const CALL_OUTCOMES = [
  "agent_hangup",
  "transferred",
  "caller_silent",
  "max_call_duration",
  "caller_hangup",
  "instance_lost",
  "unanswered",
  "bridge_shutdown",
] as const;

export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** How and why a call ended, as whoever ended it says: the outcome to count, the reason to read. */
export interface CallEnd {
  readonly outcome: CallOutcome;
  readonly reason: string;
}

/** A call the bridge itself ended because it was shutting down (drain over, or a stop). */
export const BRIDGE_SHUTDOWN: CallEnd = { outcome: "bridge_shutdown", reason: "bridge shut down" };

/** The end another bridge (or this one's next start) writes for a call whose instance died without ending it. */
export const INSTANCE_LOST: CallEnd = { outcome: "instance_lost", reason: "instance lost" };
