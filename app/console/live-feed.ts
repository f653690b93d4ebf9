// The live feed behind the console: every record event of every call (heard from the transcript
// store) and what is forming in the live ones (from their watched transport and services), sent
// to each connected page as it happens. A page that connects gets the live calls so far first.
// The feed keeps only what is forming; the events themselves are read from the store.
import type { CallEvent, TranscriptStore } from "../../src/records/call-record.ts";
import type { ActivitySink } from "./call-activity.ts";
import type { CallActivity, ConsoleMessage, LiveCall } from "./live-events.ts";

/** What is forming in a live call: the caller's words, the agent's reply, its audio. */
interface Forming {
  caller?: CallActivity;
  reply?: CallActivity;
  audio?: CallActivity;
}

export type Subscriber = (json: string) => void;

export class LiveFeed {
  readonly #store: TranscriptStore;
  readonly #instance: string;
  readonly #live = new Map<string, Forming>();
  /** Live calls of other bridges on the same database: their events so far, by call id. */
  readonly #elsewhere = new Map<string, { instance: string; events: CallEvent[] }>();
  readonly #subscribers = new Set<Subscriber>();

  /** `instance`: this bridge's name, which marks its calls (several bridges share one database). */
  constructor(store: TranscriptStore, instance: string) {
    this.#store = store;
    this.#instance = instance;
    store.observe((callId, event) => this.#onEvent(callId, event));
  }

  get liveCalls(): number {
    return this.#live.size + this.#elsewhere.size;
  }

  /** An event of another bridge's call (heard from the shared database). */
  elsewhere(instance: string, callId: string, event: CallEvent): void {
    if (this.#live.has(callId)) return;
    let call = this.#elsewhere.get(callId);
    if (!call) {
      call = { instance, events: [] };
      this.#elsewhere.set(callId, call);
    }
    call.events.push(event);
    if (event.type === "call-end") this.#elsewhere.delete(callId);
    this.#broadcast({ type: "event", callId, instance, event });
  }

  /** Another bridge's call that was live before this bridge started, with its events so far. */
  seedElsewhere(instance: string, callId: string, events: CallEvent[]): void {
    if (this.#live.has(callId) || this.#elsewhere.has(callId)) return;
    if (events.some((e) => e.type === "call-end")) return;
    this.#elsewhere.set(callId, { instance, events: [...events] });
  }

  get subscribers(): number {
    return this.#subscribers.size;
  }

  /** Where one call's activity goes. */
  activitySink(callId: string): ActivitySink {
    return (activity) => {
      const forming = this.#live.get(callId);
      if (!forming) return;
      keep(forming, activity);
      this.#broadcast({ type: "activity", callId, activity });
    };
  }

  /** Sends `hello` (the live calls so far) and then everything that happens, until the returned stop. */
  subscribe(send: Subscriber): () => void {
    const calls: LiveCall[] = [...this.#live].map(([callId, f]) => ({
      callId,
      instance: this.#instance,
      // A long call's page starts from its call-start, its dial and its latest events.
      events: this.#store.recent(callId),
      forming: [f.caller, f.reply, f.audio].filter((a): a is CallActivity => a !== undefined),
    }));
    for (const [callId, c] of this.#elsewhere)
      calls.push({ callId, instance: c.instance, events: [...c.events], forming: [] });
    send(JSON.stringify({ type: "hello", calls } satisfies ConsoleMessage));
    this.#subscribers.add(send);
    return () => this.#subscribers.delete(send);
  }

  #onEvent(callId: string, event: CallEvent): void {
    if (event.type === "call-start") this.#live.set(callId, {});
    const forming = this.#live.get(callId);
    if (forming && event.type === "user") delete forming.caller;
    if (forming && event.type === "assistant") delete forming.reply;
    if (event.type === "call-end") this.#live.delete(callId);
    this.#broadcast({ type: "event", callId, instance: this.#instance, event });
  }

  #broadcast(message: ConsoleMessage): void {
    if (this.#subscribers.size === 0) return;
    const json = JSON.stringify(message);
    for (const send of this.#subscribers) send(json);
  }
}

/** Keeps the latest state of each strand: a page connecting mid-call starts from it. */
function keep(f: Forming, a: CallActivity): void {
  switch (a.kind) {
    case "caller-speaking":
    case "caller-recognizing":
    case "caller-heard":
    case "dtmf":
      f.caller = a;
      return;
    case "caller-dropped":
      delete f.caller;
      return;
    case "agent-thinking":
      if (f.reply?.kind !== "agent-text") f.reply = a;
      return;
    case "agent-text":
      f.reply = a;
      return;
    case "agent-text-end":
      if (f.reply?.kind === "agent-text" && f.reply.draft === a.draft) delete f.reply;
      return;
    case "agent-tool":
      return;
    case "agent-audio":
      if (a.state === "playing") f.audio = a;
      else delete f.audio;
      return;
  }
}
