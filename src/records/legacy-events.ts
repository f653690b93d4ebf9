// Call events as versions before the call-end carried its outcome wrote them, read as events of
// now: SQLite and PostgreSQL rows written then, .jsonl records imported, and the live events of
// other bridges still on an older version during a rolling upgrade. Nothing ending a call now
// comes through here: its outcome is set where it ends (outcome.ts).

import type { CallEvent } from "./call-record.ts";
import { BRIDGE_SHUTDOWN, type CallOutcome, INSTANCE_LOST } from "./outcome.ts";

/** A call-end as earlier versions recorded it: a reason, no outcome. */
export type LegacyCallEnd = Omit<Extract<CallEvent, { type: "call-end" }>, "outcome">;

/** An event as a store or an imported file gives it back: of now, or a legacy call-end. */
export type StoredEvent = CallEvent | LegacyCallEnd;

/** The event of now that a stored one is: a legacy call-end gets the outcome its reason meant. */
export function eventOfNow(event: StoredEvent): CallEvent {
  if (event.type !== "call-end" || "outcome" in event) return event;
  return { ...event, outcome: legacyOutcomeOf(event.reason) };
}

/**
 * The outcome of a legacy call-end, read from its reason as those versions did, except that their
 * shutdown's reason, which they counted as the caller hanging up, is read for what it was.
 */
export function legacyOutcomeOf(reason: string): CallOutcome {
  if (reason.startsWith("agent")) return "agent_hangup";
  if (reason.startsWith("transferred")) return "transferred";
  if (reason === "caller silent") return "caller_silent";
  if (reason === "max call duration") return "max_call_duration";
  if (reason === INSTANCE_LOST.reason) return "instance_lost";
  if (reason === BRIDGE_SHUTDOWN.reason) return "bridge_shutdown";
  if (reason.startsWith("unanswered")) return "unanswered";
  return "caller_hangup";
}
