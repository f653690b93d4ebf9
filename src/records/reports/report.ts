// The body of an end-of-call report: the call's record exactly as GET /calls/:id gives it (turns
// with what was generated and what the caller heard, per-turn metrics, events), plus what only
// the end of the call knows. This is the one definition of the wire format (docs/data.md, "Call reports").
import { randomUUID } from "node:crypto";
import type { CallRecord } from "../call-record.ts";
import type { CallOutcome } from "../outcome.ts";

export interface CallReport extends CallRecord {
  /** Unique per report and the same on every delivery attempt: receivers de-duplicate on it. */
  reportId: string;
  /** The host name of the instance that took the call (where its files are). */
  instance: string;
  endedAt: string;
  endReason: string;
  outcome: CallOutcome;
  durationMs: number;
  /** The call's WAV on that instance, when recording is on and the file was written. */
  recordingPath?: string;
}

export interface ReportExtras {
  instance: string;
  recordingPath?: string | undefined;
}

/** The report of an ended call; undefined for a record without its call-end (the call is not over). */
export function callReport(record: CallRecord, extras: ReportExtras): CallReport | undefined {
  const end = record.events.findLast((e) => e.type === "call-end");
  if (end?.type !== "call-end") return undefined;
  return {
    reportId: randomUUID(),
    instance: extras.instance,
    ...record,
    // A copy: a call id that comes back (a reconnecting Twilio stream) appends to the same record.
    events: [...record.events],
    endedAt: end.at,
    endReason: end.reason,
    outcome: end.outcome,
    durationMs: end.durationMs,
    ...(extras.recordingPath ? { recordingPath: extras.recordingPath } : {}),
  };
}
