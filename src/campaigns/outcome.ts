// How an attempt ended, from its call's record: the dial event (who answered, or why nobody did;
// a machine's message left or not) and the call's end. The record is the one truth: the campaign
// reads it as the call's end is recorded, never guesses from the reason's words.
import type { CallEvent } from "../records/call-record.ts";
import type { AttemptOutcome } from "./campaign.ts";

type Dial = Extract<CallEvent, { type: "dial" }>;
type End = Extract<CallEvent, { type: "call-end" }>;

export function attemptOutcome(
  dial: Dial | undefined,
  end: End,
): { outcome: AttemptOutcome; reason: string } {
  if (!dial) return { outcome: "failed", reason: `ended before dialling settled: ${end.reason}` };
  switch (dial.outcome) {
    case "human":
      return { outcome: "answered", reason: end.reason };
    case "machine":
      return dial.amd?.messageStartedAtMs !== undefined
        ? { outcome: "voicemail-left", reason: end.reason }
        : { outcome: "voicemail", reason: end.reason };
    case "canceled":
      return { outcome: "canceled", reason: dial.reason ?? end.reason };
    default:
      return { outcome: dial.outcome, reason: dial.reason ?? end.reason };
  }
}
