// The record of a call, written as it happens: one JSON line per event appended to a file
// (in order, off the event loop: append-file.ts), so a crash loses at most the turn in flight.
// The same events rebuild the record for GET /calls/:id and for the simulator's report.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AppendFile } from "./append-file.ts";
import { callFileStem } from "./call-file-name.ts";

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

/** Keeps call records on disk (JSON lines) and the recent ones in memory. */
export class TranscriptStore {
  readonly #dir: string | undefined;
  readonly #recent = new Map<string, CallEvent[]>();
  readonly #keep: number;
  /** Open files of calls whose call-end has not been written yet. */
  readonly #files = new Map<string, AppendFile>();
  /** Files of ended calls still writing their last lines. */
  readonly #closing = new Set<Promise<void>>();
  readonly #onWriteError: (err: Error, callId: string) => void;

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
    let events = this.#recent.get(callId);
    if (!events) {
      events = [];
      this.#recent.set(callId, events);
      if (this.#recent.size > this.#keep) this.#recent.delete(this.#recent.keys().next().value!);
    }
    events.push(event);
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

  /** Resolves once every event appended so far is on disk (shutdown). */
  async flush(): Promise<void> {
    await Promise.all([...this.#closing, ...[...this.#files.values()].map((f) => f.flushed())]);
  }

  get(callId: string): CallRecord | undefined {
    const events = this.#recent.get(callId);
    if (events) return recordFromEvents(events);
    if (!this.#dir || !/^[\w.-]+$/.test(callId)) return undefined;
    try {
      const lines = readFileSync(this.#path(callId), "utf8").split("\n").filter(Boolean);
      return recordFromEvents(lines.map((l) => JSON.parse(l) as CallEvent));
    } catch {
      return undefined;
    }
  }

  #path(callId: string): string {
    return join(this.#dir!, `${callFileStem(callId)}.jsonl`);
  }
}
