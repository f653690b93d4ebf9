// The record of a call, written as it happens: one JSON line per event appended to a file
// (in order, off the event loop: append-file.ts), so a crash loses at most the turn in flight.
// The same events rebuild the record for GET /calls/:id and for the simulator's report.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { AppendFile } from "./append-file.ts";
import { callFileStem } from "./call-file-name.ts";
import { CallIndex, type IndexedCall } from "./call-index.ts";
import { type CallOutcome, outcomeOf } from "./call-outcome.ts";

export interface TurnMetrics {
  /** End of the caller's speech → turn confirmed. */
  eouDelayMs?: number;
  asrMs?: number;
  llmTtftMs?: number;
  ttsFirstAudioMs?: number;
  /** End of the caller's speech → first agent audio handed to the transport. */
  voiceToVoiceMs?: number;
  /** Caller speech start over the agent → agent audio cleared. */
  bargeInMs?: number;
}

export type CallEvent =
  | { type: "call-start"; at: string; callId: string; transport: string; from?: string; to?: string }
  | { type: "user"; at: string; text: string; source: "speech" | "dtmf"; speaker?: string }
  | {
      type: "assistant";
      at: string;
      generated: string;
      heard: string;
      interrupted: boolean;
      toolCalls: { name: string; arguments: string }[];
      metrics: TurnMetrics;
      error?: string;
    }
  | { type: "barge-in"; at: string; outcome: "interrupted" | "resumed" }
  | { type: "note"; at: string; text: string }
  | { type: "call-end"; at: string; reason: string; durationMs: number };

/** One spoken turn, for people reading a call: who, what, and for the agent what was heard. */
export type TurnView =
  | { role: "user"; text: string; source: "speech" | "dtmf"; speaker?: string; at: string }
  | {
      role: "assistant";
      text: string;
      generated: string;
      heard: string;
      interrupted: boolean;
      tools: string[];
      metrics: TurnMetrics;
      error?: string;
      at: string;
    };

export interface CallRecord {
  callId: string;
  transport: string;
  from?: string;
  to?: string;
  startedAt: string;
  endedAt?: string;
  endReason?: string;
  turns: TurnView[];
  events: CallEvent[];
}

function turnsOf(events: CallEvent[]): TurnView[] {
  const turns: TurnView[] = [];
  for (const e of events) {
    if (e.type === "user") {
      const { text, source, speaker, at } = e;
      turns.push({ role: "user", text, source, ...(speaker ? { speaker } : {}), at });
    } else if (e.type === "assistant") {
      turns.push({
        role: "assistant",
        text: e.heard,
        generated: e.generated,
        heard: e.heard,
        interrupted: e.interrupted,
        tools: e.toolCalls.map((c) => c.name),
        metrics: e.metrics,
        ...(e.error ? { error: e.error } : {}),
        at: e.at,
      });
    }
  }
  return turns;
}

export function recordFromEvents(events: CallEvent[]): CallRecord | undefined {
  const start = events.find((e) => e.type === "call-start");
  if (start?.type !== "call-start") return undefined;
  const end = events.find((e) => e.type === "call-end");
  return {
    callId: start.callId,
    transport: start.transport,
    ...(start.from ? { from: start.from } : {}),
    ...(start.to ? { to: start.to } : {}),
    startedAt: start.at,
    ...(end?.type === "call-end" ? { endedAt: end.at, endReason: end.reason } : {}),
    turns: turnsOf(events),
    events,
  };
}

/** One line per call for GET /calls: the record without its turns and events, and how it ended. */
export type CallSummary = Omit<CallRecord, "turns" | "events"> & {
  outcome?: CallOutcome;
  /** Spoken turns so far (the caller's and the agent's). */
  turns: number;
};

function summaryOf(record: CallRecord): CallSummary {
  const { turns, events: _events, ...call } = record;
  const outcome = call.endReason !== undefined ? { outcome: outcomeOf(call.endReason) } : {};
  return { ...call, ...outcome, turns: turns.length };
}

/** A call file's first event (its call-start), read without reading the whole file. */
function firstEvent(path: string): CallEvent | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const head = Buffer.alloc(8192);
    const n = readSync(fd, head, 0, head.length, 0);
    const end = head.subarray(0, n).indexOf(10);
    return end < 0 ? undefined : (JSON.parse(head.subarray(0, end).toString()) as CallEvent);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Keeps call records on disk (JSON lines) and in memory every live call plus the `keep` most
 * recently ended ones: a live call is never evicted (its record and end-of-call report are built
 * from memory), so memory grows with the calls in progress and the ended calls kept, nothing else.
 */
export class TranscriptStore {
  readonly #dir: string | undefined;
  /** Calls whose call-end has not been appended yet: never evicted. */
  readonly #live = new Map<string, CallEvent[]>();
  /** Ended calls, oldest first, at most `keep`. */
  readonly #ended = new Map<string, CallEvent[]>();
  readonly #keep: number;
  /** Open files of calls whose call-end has not been written yet. */
  readonly #files = new Map<string, AppendFile>();
  /** Files of ended calls still writing their last lines. */
  readonly #closing = new Set<Promise<void>>();
  readonly #onWriteError: (err: Error, callId: string) => void;
  /** Every call on disk (or, without a directory, in memory) by start; filled from the directory on first use. */
  readonly #index = new CallIndex();
  #indexed = false;
  readonly #observers = new Set<(callId: string, event: CallEvent) => void>();

  /**
   * Without a directory, records live in memory only (tests, benchmarks). `onWriteError` hears
   * failed file writes (the record in memory is kept); by default they go to stderr.
   */
  constructor(
    dir: string | undefined,
    keep = 200,
    onWriteError: (err: Error, callId: string) => void = (err, callId) =>
      process.stderr.write(`transcript of ${callId}: ${err.message}\n`),
  ) {
    this.#dir = dir;
    this.#keep = keep;
    this.#onWriteError = onWriteError;
    if (dir) mkdirSync(dir, { recursive: true });
  }

  append(callId: string, event: CallEvent): void {
    let events = this.#live.get(callId);
    if (!events) {
      // A call id that comes back after its end (a reconnecting Twilio stream) goes on the same record.
      events = this.#ended.get(callId) ?? [];
      this.#ended.delete(callId);
      this.#live.set(callId, events);
    }
    events.push(event);
    if (event.type === "call-end") this.#retire(callId, events);
    if (event.type === "call-start") this.#index.add({ startedAt: event.at, callId });
    for (const observer of this.#observers) observer(callId, event);
    if (!this.#dir) return;
    let file = this.#files.get(callId);
    if (!file) {
      file = new AppendFile(this.#path(callId), (err) => this.#onWriteError(err, callId));
      this.#files.set(callId, file);
    }
    file.add(`${JSON.stringify(event)}\n`);
    if (event.type === "call-end") {
      this.#files.delete(callId);
      const closed: Promise<void> = file.close().finally(() => this.#closing.delete(closed));
      this.#closing.add(closed);
    }
  }

  /** Moves an ended call from the live calls to the ended ones, forgetting the oldest beyond `keep`. */
  #retire(callId: string, events: CallEvent[]): void {
    this.#live.delete(callId);
    this.#ended.set(callId, events);
    while (this.#ended.size > this.#keep) {
      const oldest = this.#ended.keys().next().value!;
      this.#ended.delete(oldest);
      // In memory only, a call forgotten is gone from the list too.
      if (!this.#dir) this.#index.remove(oldest);
    }
  }

  /** Hears every event from now on, once stored (the live console). Returns what stops it. */
  observe(observer: (callId: string, event: CallEvent) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Resolves once every event appended so far is on disk (shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.#closing, ...[...this.#files.values()].map((f) => f.flushed())]);
  }

  get(callId: string): CallRecord | undefined {
    // Any id (a SIP Call-ID has an @): callFileStem makes its file name safe, and two ids that
    // share a file name are told apart by the id the file records.
    const record = this.#record(callId);
    return record?.callId === callId ? record : undefined;
  }

  #record(callId: string): CallRecord | undefined {
    const events = this.#live.get(callId) ?? this.#ended.get(callId);
    // Events without their call-start: a call that came back after being forgotten; the file has it all.
    const inMemory = events && recordFromEvents(events);
    if (inMemory) return inMemory;
    if (!this.#dir) return undefined;
    try {
      const lines = readFileSync(this.#path(callId), "utf8").split("\n").filter(Boolean);
      return recordFromEvents(lines.map((l) => JSON.parse(l) as CallEvent));
    } catch {
      return undefined;
    }
  }

  /**
   * Up to `limit` calls, newest first, started before `after` (the last call of the previous page)
   * when given; `next` names the last call returned when there are more.
   */
  list(limit: number, after?: IndexedCall): { calls: CallSummary[]; next?: IndexedCall } {
    this.#indexDir();
    const page = this.#index.page(limit, after);
    const calls = page.calls.flatMap((c) => {
      // Ids of any shape (a SIP Call-ID has an @): the file name is made safe by callFileStem.
      const record = this.#record(c.callId);
      return record ? [summaryOf(record)] : [];
    });
    return page.next ? { calls, next: page.next } : { calls };
  }

  /** Adds the calls of earlier runs, from the first line of each file (once, when first listed). */
  #indexDir(): void {
    if (this.#indexed || !this.#dir) return;
    this.#indexed = true;
    for (const name of readdirSync(this.#dir)) {
      if (!name.endsWith(".jsonl")) continue;
      const start = firstEvent(join(this.#dir, name));
      if (start?.type === "call-start") this.#index.add({ startedAt: start.at, callId: start.callId });
    }
  }

  #path(callId: string): string {
    return join(this.#dir!, `${callFileStem(callId)}.jsonl`);
  }
}
