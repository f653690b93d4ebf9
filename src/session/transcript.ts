// The record of a call, as events appended while it happens (call-start, the turns, barge-ins,
// call-end); the same events rebuild the record for GET /calls/:id, the console and the reports.
// The session appends them here; they are kept in memory while the call lives and passed on to
// the store (src/store) through CallEventSink, the session's own interface to it.

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
  | {
      type: "call-start";
      at: string;
      callId: string;
      transport: string;
      from?: string;
      to?: string;
      /** The agent that took the call (the store's `agent` column). */
      agent?: string;
      /** `outbound` when the bridge placed the call (POST /calls); absent means inbound. */
      direction?: CallDirection;
    }
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
  /** An outbound call's dialling settled: who or what answered, or why nobody did. */
  | {
      type: "dial";
      at: string;
      outcome: DialOutcome;
      reason?: string;
      amd?: AmdResult;
      /** Audio the far end sent before answering (SIP early media), ms; heard by the detector only. */
      earlyMediaMs?: number;
    }
  | { type: "call-end"; at: string; reason: string; durationMs: number }
  /** After the call: the agent's analysis (summary and fields), or why there is none. */
  | { type: "analysis"; at: string; analysis: CallAnalysis };

export type CallDirection = "inbound" | "outbound";

/** How an outbound call's dialling ended (docs/outbound.md). */
export const DIAL_OUTCOMES = ["human", "machine", "busy", "no-answer", "failed", "canceled"] as const;
export type DialOutcome = (typeof DIAL_OUTCOMES)[number];

/** Who answered, as answering-machine detection (ours or Twilio's) decided. */
export interface AmdResult {
  /** `human`, `machine`, or `unknown` (detection off, or undecided when it gave up). */
  result: "human" | "machine" | "unknown";
  /** From the answer to the decision, ms. */
  decidedAfterMs: number;
  /** When the voicemail's beep ended, ms after the answer (machines with a beep). */
  beepEndedAtMs?: number;
  /** When the voicemail message started playing, ms after the answer (policy `message`). */
  messageStartedAtMs?: number;
  /** Who decided: our detector or Twilio's. */
  by?: "bridge" | "twilio";
}

/** The post-call analysis of a call (docs/agents.md, "Analysis after the call"). */
export type CallAnalysis =
  | { status: "done"; summary?: string; fields: Record<string, string | number | boolean | null> }
  | { status: "failed"; error: string };

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
  agent?: string;
  direction: CallDirection;
  /** Outbound calls: how dialling went (`failed` carries the SIP/Twilio reason in `dialReason`). */
  dialOutcome?: DialOutcome;
  dialReason?: string;
  amd?: AmdResult;
  /** Early media heard before the answer or the failure (ringback, announcements), ms. */
  earlyMediaMs?: number;
  startedAt: string;
  endedAt?: string;
  endReason?: string;
  turns: TurnView[];
  analysis?: CallAnalysis;
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
  const analysis = events.findLast((e) => e.type === "analysis");
  const dial = events.findLast((e) => e.type === "dial");
  return {
    callId: start.callId,
    transport: start.transport,
    ...(start.from ? { from: start.from } : {}),
    ...(start.to ? { to: start.to } : {}),
    ...(start.agent ? { agent: start.agent } : {}),
    direction: start.direction ?? "inbound",
    ...(dial?.type === "dial"
      ? {
          dialOutcome: dial.outcome,
          ...(dial.reason ? { dialReason: dial.reason } : {}),
          ...(dial.amd ? { amd: dial.amd } : {}),
          ...(dial.earlyMediaMs ? { earlyMediaMs: dial.earlyMediaMs } : {}),
        }
      : {}),
    startedAt: start.at,
    ...(end?.type === "call-end" ? { endedAt: end.at, endReason: end.reason } : {}),
    turns: turnsOf(events),
    ...(analysis?.type === "analysis" ? { analysis: analysis.analysis } : {}),
    events,
  };
}

/**
 * Where a call's events go to be kept (the store of call records): the session's own interface,
 * so the session never knows the engine. `append` must not block: it queues.
 */
export interface CallEventSink {
  append(callId: string, event: CallEvent): void;
}

/**
 * The records of the calls in progress and of the `keep` most recently ended ones, in memory,
 * each event passed on to the sink (the database) as it is appended. A live call is never evicted:
 * its record and end-of-call report are built from memory, so memory grows with the calls in
 * progress and the ended calls kept, nothing else. Older calls are read from the store.
 */
export class TranscriptStore implements CallEventSink {
  readonly #sink: CallEventSink | undefined;
  /** Calls whose call-end has not been appended yet: never evicted. */
  readonly #live = new Map<string, CallEvent[]>();
  /** Ended calls, oldest first, at most `keep`. */
  readonly #ended = new Map<string, CallEvent[]>();
  readonly #keep: number;
  readonly #observers = new Set<(callId: string, event: CallEvent) => void>();

  /** Without a sink, records live in memory only (tests, benchmarks). */
  constructor(sink: CallEventSink | undefined, keep = 200) {
    this.#sink = sink;
    this.#keep = keep;
  }

  append(callId: string, event: CallEvent): void {
    let events = this.#live.get(callId);
    if (!events && event.type === "analysis") {
      // The analysis comes after the call's end: it joins the ended record (if still in memory),
      // which stays ended; the store keeps it either way.
      this.#ended.get(callId)?.push(event);
    } else if (!events) {
      // A call id that comes back after its end (a reconnecting Twilio stream) goes on the same record.
      events = this.#ended.get(callId) ?? [];
      this.#ended.delete(callId);
      this.#live.set(callId, events);
    }
    if (events) {
      events.push(event);
      if (event.type === "call-end") this.#retire(callId, events);
    }
    this.#sink?.append(callId, event);
    for (const observer of this.#observers) observer(callId, event);
  }

  /** Moves an ended call from the live calls to the ended ones, forgetting the oldest beyond `keep`. */
  #retire(callId: string, events: CallEvent[]): void {
    this.#live.delete(callId);
    this.#ended.set(callId, events);
    while (this.#ended.size > this.#keep) this.#ended.delete(this.#ended.keys().next().value!);
  }

  /** Hears every event from now on (the live console). Returns what stops it. */
  observe(observer: (callId: string, event: CallEvent) => void): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** The calls in progress. */
  get liveCalls(): string[] {
    return [...this.#live.keys()];
  }

  /** A live or recently ended call's record (undefined when memory no longer has it whole). */
  get(callId: string): CallRecord | undefined {
    const events = this.#live.get(callId) ?? this.#ended.get(callId);
    return events && recordFromEvents(events);
  }
}
