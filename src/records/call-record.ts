// The call-record model: a call as the events appended while it happens (call-start, the turns,
// barge-ins, call-end with its outcome), and the record those same events rebuild for
// GET /calls/:id, the console and the reports. The session and the dialer append them through
// CallEventSink, which the store (records/store) implements, and memory keeps them while the call
// lives (TranscriptStore: its latest events only, when the store keeps the rest).

import type { CallOutcome } from "./outcome.ts";

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
  /**
   * End of the caller's speech → their words sent for recognition (the upload's end): the
   * silence the bridge waits for before it asks. asrMs runs from there.
   */
  detectMs?: number;
  /**
   * The bridge's own wait in voiceToVoiceMs: what is left after detection, recognition, first
   * token and first audio (a wait for the end-of-turn decision, a connection, the transport).
   */
  waitMs?: number;
  /** Chat requests the turn sent (one per tool round, plus retries). */
  chatRequests?: number;
  /** Second chat requests started beside a late first one (absent: none). */
  hedgedRequests?: number;
  /** Chat requests that went to the agent's fallback (absent: none). */
  fallbacks?: number;
  /** TTS sessions opened to replace one cut mid-reply (absent: none). */
  ttsReopens?: number;
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
  | {
      type: "user";
      at: string;
      text: string;
      source: "speech" | "dtmf";
      speaker?: string;
      /** The agent the caller spoke to, once the call was handed to another (absent: the call's first). */
      agent?: string;
    }
  | {
      type: "assistant";
      at: string;
      /** The agent that spoke, once the call was handed to another (absent: the call's first). */
      agent?: string;
      generated: string;
      heard: string;
      interrupted: boolean;
      toolCalls: { name: string; arguments: string }[];
      metrics: TurnMetrics;
      error?: string;
    }
  | { type: "barge-in"; at: string; outcome: "interrupted" | "resumed" }
  | { type: "note"; at: string; text: string }
  /** The call went on with another agent (its `handoffs`): who handed it to whom, why, what was carried. */
  | {
      type: "handoff";
      at: string;
      from: string;
      to: string;
      reason: string;
      history: HandoffHistory;
    }
  /** A warm transfer settled: how it went and, once someone answered, the person's leg. */
  | {
      type: "warm-transfer";
      at: string;
      target: string;
      outcome: WarmTransferOutcome;
      /** Why it did not join, in words. */
      why?: string;
      leg?: PersonLegTimes;
    }
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
  /** How the call ended: `outcome` set by whoever ended it, `reason` in words for people. */
  | {
      type: "call-end";
      at: string;
      reason: string;
      outcome: CallOutcome;
      durationMs: number;
      /** The caller's and the room's levels over the call (phone calls; absent if no audio came). */
      levels?: CallLevels;
    }
  /** After the call: the agent's analysis (summary and fields), or why there is none. */
  | { type: "analysis"; at: string; analysis: CallAnalysis };

export type CallDirection = "inbound" | "outbound";

/**
 * How a warm transfer went: joined, or why the caller came back to the agent (declined: the person
 * pressed 2 or said no; no-decision: answered but gave no answer; canceled: the caller went first).
 */
export const WARM_TRANSFER_OUTCOMES = [
  "joined",
  "declined",
  "no-decision",
  "busy",
  "no-answer",
  "voicemail",
  "failed",
  "canceled",
] as const;
export type WarmTransferOutcome = (typeof WARM_TRANSFER_OUTCOMES)[number];

/** The person's call of a warm transfer, once answered. */
export interface PersonLegTimes {
  /** The person's call's own id. */
  id: string;
  /** Who answered: the number or URI reached. */
  who: string;
  answeredAt: string;
  /** When the caller and the person were joined. */
  joinedAt?: string;
  /** When the person's call ended (a joined call's ends with the call: its call-end). */
  endedAt?: string;
}

/** A warm transfer as the record shows it (the person's leg ended, once the call is over). */
export type WarmTransferView = Omit<Extract<CallEvent, { type: "warm-transfer" }>, "type">;

/** What the agent taking a call over gets of the conversation: all of it, a digest, or nothing. */
export type HandoffHistory = "whole" | "summary" | "none";

/** How loud the caller and the room behind them were over a call (session/caller-voice.ts). */
export interface CallLevels {
  /** The caller's speech level, dBFS (absent if they never spoke). */
  callerDb?: number;
  /** How much of the caller's speech that level was learned from, ms (with callerDb). */
  callerSpeechMs?: number;
  /** The room's median level (the call's noise), dBFS. */
  noiseDb?: number;
  /** How long the voice detector went on hearing speech after the caller's own had ended, ms. */
  roomHeldMs: number;
  /**
   * The usual level of callers on the call's line as the call began (the median of its last
   * calls'), dBFS; absent until its calls had taught it (session/line-level.ts).
   */
  lineDb?: number;
  /** How long a voice under that level was kept from stopping the agent before the caller spoke, ms. */
  lineHeldMs?: number;
  /**
   * Utterances sent for recognition again: the caller went on after a pause their upload had ended
   * at (session/speaker-listener.ts). Each is one more recognition request.
   */
  resentUtterances?: number;
}

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
  | { role: "user"; text: string; source: "speech" | "dtmf"; speaker?: string; agent?: string; at: string }
  | {
      role: "assistant";
      /** The agent that spoke, after a handoff (absent: the call's first agent, `CallRecord.agent`). */
      agent?: string;
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
  /** The caller's and the room's levels (once the call has ended). */
  levels?: CallLevels;
  /** Who took the call in a warm transfer (the person joined with the caller). */
  takenBy?: string;
  /** The warm transfers tried, in order. */
  warmTransfers?: WarmTransferView[];
  turns: TurnView[];
  analysis?: CallAnalysis;
  events: CallEvent[];
}

/** The spoken turn an event is (the caller's words or the agent's reply), if it is one. */
export function turnOf(e: CallEvent): TurnView | undefined {
  if (e.type === "user") {
    const { text, source, speaker, agent, at } = e;
    return { role: "user", text, source, ...(speaker ? { speaker } : {}), ...(agent ? { agent } : {}), at };
  }
  if (e.type !== "assistant") return undefined;
  return {
    role: "assistant",
    ...(e.agent ? { agent: e.agent } : {}),
    text: e.heard,
    generated: e.generated,
    heard: e.heard,
    interrupted: e.interrupted,
    tools: e.toolCalls.map((c) => c.name),
    metrics: e.metrics,
    ...(e.error ? { error: e.error } : {}),
    at: e.at,
  };
}

function turnsOf(events: CallEvent[]): TurnView[] {
  return events.map(turnOf).filter((t): t is TurnView => t !== undefined);
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
    ...(end?.type === "call-end" && end.levels ? { levels: end.levels } : {}),
    ...warmTransfersOf(events, end?.type === "call-end" ? end.at : undefined),
    turns: turnsOf(events),
    ...(analysis?.type === "analysis" ? { analysis: analysis.analysis } : {}),
    events,
  };
}

/** The warm transfers of a call, a joined leg ending with the call; who took it, if one joined. */
function warmTransfersOf(
  events: CallEvent[],
  endedAt: string | undefined,
): Pick<CallRecord, "takenBy" | "warmTransfers"> {
  const tried: WarmTransferView[] = [];
  for (const e of events) {
    if (e.type !== "warm-transfer") continue;
    const { type: _type, ...view } = e;
    if (view.leg && !view.leg.endedAt && endedAt) view.leg = { ...view.leg, endedAt };
    tried.push(view);
  }
  if (!tried.length) return {};
  const who = tried.findLast((t) => t.outcome === "joined")?.leg?.who;
  return { ...(who ? { takenBy: who } : {}), warmTransfers: tried };
}

/**
 * Where a call's events go to be kept (the store of call records): what the session and the
 * dialer append to, so neither knows the engine. `append` must not block: it queues.
 */
export interface CallEventSink {
  append(callId: string, event: CallEvent): void;
}

/**
 * A sink that keeps the records and gives them back (the call store): with one, memory keeps only
 * a live call's latest events, the rest is read back from it.
 */
export interface CallRecordKeeper extends CallEventSink {
  /**
   * The write barrier: resolves once every event appended before it is settled, true when all of
   * `callId`'s are stored, false when one of them could not be (memory must then keep them).
   */
  written(callId: string): Promise<boolean>;
  get(callId: string): Promise<CallRecord | undefined>;
}

/** A call's events as memory holds them: whole, or its call-start and dial and its latest events. */
interface HeldCall {
  /** The latest events; every event before them is in the store (the barrier said so). */
  tail: CallEvent[];
  /** How many of the call's first events memory let go of (the store's `dropped` first). */
  dropped: number;
  /** What the live paths read of the events let go of: the call-start and the latest dial. */
  pinned: CallEvent[];
  /** A barrier is on its way. */
  checking: boolean;
  /** The store missed one of this call's events: memory keeps them all from now on. */
  holed: boolean;
}

/** Live events kept in memory per call when a keeper holds the rest (their latest, at least). */
export const LIVE_TAIL = 100;

/**
 * The records of the calls in progress and of the `keep` most recently ended ones, in memory,
 * each event passed on to the sink (the database) as it is appended. A live call is never evicted.
 * With a keeper for a sink, a call keeps in memory its call-start, its dial and its latest
 * `liveTail` to 1.5 × `liveTail` events (those the store has written are let go of in batches), so
 * an hour-long call costs what a short one does; `read` gives the whole record back. Without one
 * (tests, benchmarks), every event of the live and kept calls stays in memory.
 */
export class TranscriptStore implements CallEventSink {
  readonly #sink: CallEventSink | undefined;
  readonly #keeper: CallRecordKeeper | undefined;
  /** Calls whose call-end has not been appended yet: never evicted. */
  readonly #live = new Map<string, HeldCall>();
  /** Ended calls, oldest first, at most `keep`. */
  readonly #ended = new Map<string, HeldCall>();
  readonly #keep: number;
  readonly #liveTail: number;
  readonly #observers = new Set<(callId: string, event: CallEvent) => void>();

  /** Without a sink, records live in memory only (tests, benchmarks). */
  constructor(sink: CallEventSink | CallRecordKeeper | undefined, keep = 200, liveTail = LIVE_TAIL) {
    this.#sink = sink;
    this.#keeper = sink && "written" in sink ? sink : undefined;
    this.#keep = keep;
    this.#liveTail = Math.max(1, liveTail);
  }

  append(callId: string, event: CallEvent): void {
    let held = this.#live.get(callId);
    if (!held && event.type === "analysis") {
      // The analysis comes after the call's end: it joins the ended record (if still in memory),
      // which stays ended; the store keeps it either way.
      this.#ended.get(callId)?.tail.push(event);
    } else if (!held) {
      // A call id that comes back after its end (a reconnecting Twilio stream) goes on the same record.
      held = this.#ended.get(callId) ?? { tail: [], dropped: 0, pinned: [], checking: false, holed: false };
      this.#ended.delete(callId);
      this.#live.set(callId, held);
    }
    if (held) {
      held.tail.push(event);
      if (event.type === "call-end") this.#retire(callId, held);
    }
    this.#sink?.append(callId, event);
    if (held) this.#letGo(callId, held);
    for (const observer of this.#observers) observer(callId, event);
  }

  /**
   * Once a live call holds half as many again as its tail, asks the store to confirm what it has
   * written, then lets go of the oldest of those events (never those appended after the barrier).
   */
  #letGo(callId: string, held: HeldCall): void {
    const keeper = this.#keeper;
    if (!keeper || held.checking || held.holed) return;
    if (held.tail.length < this.#liveTail + Math.ceil(this.#liveTail / 2)) return;
    held.checking = true;
    const upTo = held.dropped + held.tail.length;
    const settle = (stored: boolean) => {
      held.checking = false;
      if (!stored) {
        held.holed = true;
        return;
      }
      const n = Math.min(held.tail.length - this.#liveTail, upTo - held.dropped);
      if (n <= 0) return;
      for (const e of held.tail.slice(0, n)) {
        if (e.type === "call-start" && !held.pinned.some((p) => p.type === "call-start"))
          held.pinned.unshift(e);
        if (e.type === "dial") held.pinned = [...held.pinned.filter((p) => p.type !== "dial"), e];
      }
      held.tail.splice(0, n);
      held.dropped += n;
      // Events that came while the store wrote (a slow database): the next barrier covers them.
      this.#letGo(callId, held);
    };
    keeper.written(callId).then(settle, () => settle(false));
  }

  /** Moves an ended call from the live calls to the ended ones, forgetting the oldest beyond `keep`. */
  #retire(callId: string, held: HeldCall): void {
    this.#live.delete(callId);
    this.#ended.set(callId, held);
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

  #held(callId: string): HeldCall | undefined {
    return this.#live.get(callId) ?? this.#ended.get(callId);
  }

  /**
   * A live or recently ended call's record when memory holds it whole (undefined otherwise: a
   * long call whose first events are only in the store, or a call memory no longer has; see `read`).
   */
  get(callId: string): CallRecord | undefined {
    const held = this.#held(callId);
    return held && held.dropped === 0 ? recordFromEvents(held.tail) : undefined;
  }

  /**
   * What memory holds of a live or recent call, in order: all its events, or its call-start, its
   * dial and its latest events (the console's view of a call it joins; empty when not in memory).
   */
  recent(callId: string): CallEvent[] {
    const held = this.#held(callId);
    return held ? [...held.pinned, ...held.tail] : [];
  }

  /** How many events memory holds for a call (the bound's measure). */
  held(callId: string): number {
    const held = this.#held(callId);
    return held ? held.pinned.length + held.tail.length : 0;
  }

  /**
   * A live or recently ended call's whole record: from memory when it holds it whole, else the
   * events memory let go of read back from the store, then memory's latest. Undefined when memory
   * has no such call (read the store for older ones); rejects when the store cannot be read.
   */
  async read(callId: string): Promise<CallRecord | undefined> {
    const held = this.#held(callId);
    if (!held) return undefined;
    if (held.dropped === 0 || !this.#keeper) return recordFromEvents(held.tail);
    const { dropped } = held;
    const tail = [...held.tail];
    const stored = await this.#keeper.get(callId);
    const before = stored?.events.slice(0, dropped) ?? [];
    if (before.length < dropped)
      throw new Error(`call ${callId}: the store gave ${before.length} of its first ${dropped} events`);
    return recordFromEvents([...before, ...tail]);
  }
}
