// The seam between the bridge and its call records: one interface, two engines (SQLite embedded,
// PostgreSQL for many instances). The call path only appends (never waits on the engine); reads
// serve HTTP and the console. Every engine call runs off the event loop that carries audio.

import type { CallDirection, CallEvent, CallRecord, CallRecordKeeper, DialOutcome } from "../call-record.ts";
import type { CallOutcome } from "../outcome.ts";

/** A call's place in the newest-first order (its start, then its id): what a page cursor names. */
export interface CallPosition {
  startedAt: string;
  callId: string;
}

/** GET /calls filters, validated (call-query.ts). */
export interface CallQuery {
  from?: string;
  to?: string;
  transport?: string;
  direction?: CallDirection;
  /** An outcome; `ended` for any, `live` for calls not ended yet. */
  outcome?: CallOutcome | "ended" | "live";
  agent?: string;
  /** Started at or after (ISO 8601 UTC). */
  since?: string;
  /** Started before (ISO 8601 UTC). */
  until?: string;
  /** Words said by either side, all of them (full-text). */
  q?: string[];
  limit: number;
  /** The last call of the previous page. */
  after?: CallPosition;
}

/** One line per call for GET /calls: the record without its turns and events, and how it ended. */
export interface CallSummary {
  callId: string;
  instance: string;
  transport: string;
  direction: string;
  from?: string;
  to?: string;
  agent?: string;
  startedAt: string;
  endedAt?: string;
  endReason?: string;
  outcome?: CallOutcome;
  durationMs?: number;
  /** Spoken turns so far (the caller's and the agent's). */
  turns: number;
  /** Outbound calls: how dialling went, and why it failed. */
  dialOutcome?: DialOutcome;
  dialReason?: string;
  /** Where the recording is, when the call was recorded. */
  recording?: { instance: string; path: string };
}

export interface CallPage {
  calls: CallSummary[];
  next?: CallPosition;
}

export type ReportState = "pending" | "delivered" | "rejected";

export interface StoredRecord extends CallRecord {
  instance: string;
  recording?: { instance: string; path: string };
}

export interface CallStore extends CallRecordKeeper {
  /** `sqlite` or `postgres`. */
  readonly engine: string;
  /** Queues the event (in order per call); written within milliseconds, never waited on. */
  append(callId: string, event: CallEvent): void;
  get(callId: string): Promise<StoredRecord | undefined>;
  list(query: CallQuery): Promise<CallPage>;
  /** The call was recorded to `path` on this instance. */
  setRecording(callId: string, path: string): void;
  /** An end-of-call report's delivery state (`callId` when the report is made; attempts then name the report only). */
  setReport(reportId: string, state: ReportState, status?: number, callId?: string): void;
  /** Imports a whole call from an older format (once); false when the call is already stored. */
  importCall(events: CallEvent[]): Promise<boolean>;
  meta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
  /** Resolves once everything appended so far is written (or buffered, when the engine is down). */
  flush(): Promise<void>;
  /**
   * The ordered write barrier: resolves once everything appended before it is written (waiting
   * while the database is down), true when every event of `callId` so far is stored, false when
   * one was refused or the store closed (the transcript store then keeps that call whole).
   */
  written(callId: string): Promise<boolean>;
  close(): Promise<void>;
  /** Other bridges' call events as they happen (engines shared by several bridges only). */
  watchOthers?(listener: (e: { instance: string; callId: string; event: CallEvent }) => void): () => void;
  /** Why writes are being held back (the database is unreachable), or undefined when all is well. */
  readonly trouble: string | undefined;
}
