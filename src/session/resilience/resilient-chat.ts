// The chat port with a person waiting on the line (#54): each reply has deadlines, not hopes.
// - No first chunk within chatFirstMs: a second (hedged) request starts, to the fallback when the
//   agent has one; the first to answer is used, the other cancelled.
// - A failure before any words: sent again at once (or after the retry-after asked for) when that
//   still fits chatTotalMs from the first request; else to the fallback; else the reply fails
//   (the turn says the apology). A refused request (4xx but 408/429) is not sent again as it was.
// - A stream that goes quiet for chatGapMs (or breaks) after words were said: a new request (to
//   the fallback when there is one) takes the reply up again, and only what goes beyond the words
//   already said is passed on.
// - A target whose circuit is open is skipped for the fallback.
// Tool calls are taken from the request whose reply is used, once its stream ended well.
import type { ChatMessage, ChatTool } from "../../api/types/index.ts";
import type { Clock, TimerHandle } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import type { ServiceDeadlines } from "../config.ts";
import type { ChatEvent, ChatModel } from "../services.ts";
import { type AttemptMode, ChatAttempt, type ChatRoute, type SourceEvent } from "./chat-attempt.ts";
import { type FailureKind, failureKind, messageOf, retryAfterOf, ServiceFailure } from "./failure.ts";
import { noteRecovery } from "./request-signals.ts";
import { afterPrefix, continuationMessages, joinText } from "./spoken-prefix.ts";

export interface ResilientChatOptions {
  primary: ChatRoute;
  fallback?: ChatRoute | undefined;
  deadlines: Pick<ServiceDeadlines, "chatFirstMs" | "chatGapMs" | "chatTotalMs">;
  /** Start a second request when the first is late. */
  hedge: boolean;
  clock: Clock;
  /** Told of each hedge and fallback (the bridge's counters). */
  onHedge?: () => void;
  onFallback?: () => void;
  log?: Logger | undefined;
}

/** Requests one reply may send while getting to its next words (retries, hedges, fallbacks). */
const MAX_REQUESTS_PER_STEP = 6;
/** Times one reply is taken up again after its stream failed mid-way. */
const MAX_RESUMES = 3;

export class ResilientChat implements ChatModel {
  readonly #opts: ResilientChatOptions;
  constructor(opts: ResilientChatOptions) {
    this.#opts = opts;
  }

  stream(
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[],
    signal: AbortSignal,
  ): AsyncIterable<ChatEvent> {
    const opts = this.#opts;
    return { [Symbol.asyncIterator]: () => new ChatReply(opts, messages, tools, signal).run() };
  }
}

/** Getting from what was said so far to the next words: its budget and what it has tried. */
interface Step {
  budgetEnd: number;
  requests: number;
  hedged: boolean;
  retry: { at: number; route: ChatRoute; mode: AttemptMode } | undefined;
  lastError: unknown;
}

class ChatReply {
  readonly #o: ResilientChatOptions;
  readonly #messages: readonly ChatMessage[];
  readonly #tools: readonly ChatTool[];
  readonly #signal: AbortSignal;
  readonly #live: ChatAttempt[] = [];
  #said = "";
  #winner: ChatAttempt | undefined;
  #step!: Step;
  #resumes = 0;
  #done = false;
  #out: ChatEvent[] = [];
  #wakeUp: (() => void) | undefined;
  #woken = false;
  #timer: TimerHandle | undefined;

  constructor(
    o: ResilientChatOptions,
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[],
    signal: AbortSignal,
  ) {
    this.#o = o;
    this.#messages = messages;
    this.#tools = tools;
    this.#signal = signal;
  }

  async *run(): AsyncGenerator<ChatEvent> {
    const onAbort = () => this.#wake();
    this.#signal.addEventListener("abort", onAbort, { once: true });
    try {
      this.#newStep();
      this.#launch(this.#pick(), "fresh");
      for (;;) {
        if (this.#signal.aborted) return;
        this.#handle();
        const out = this.#out;
        this.#out = [];
        for (const ev of out) yield ev;
        if (this.#done) return;
        await this.#sleep();
      }
    } finally {
      this.#signal.removeEventListener("abort", onAbort);
      this.#o.clock.clearTimeout(this.#timer);
      for (const a of this.#live.splice(0)) this.#drop(a);
    }
  }

  /** Takes in what the requests sent, then what the clock says. Throws when the reply failed. */
  #handle(): void {
    for (const a of [...this.#live]) {
      while (a.queue.length > 0 && this.#live.includes(a)) this.#event(a, a.queue.shift()!);
      if (a.ended && this.#live.includes(a)) this.#ended(a);
      if (this.#done) return;
    }
    const now = this.#o.clock.now();
    const d = this.#o.deadlines;
    for (const a of [...this.#live]) {
      if (a.lastAt !== undefined && now - a.lastAt >= d.chatGapMs) {
        this.#failed(a, new ServiceFailure(`chat: no chunk for ${d.chatGapMs} ms`, "stall"));
      } else if (a.lastAt === undefined && !a.late && now - a.startedAt >= d.chatFirstMs) {
        a.late = true;
        this.#o.log?.debug({ afterMs: d.chatFirstMs }, "chat: no first chunk yet");
        if (this.#o.hedge && !this.#step.hedged && !this.#winner) this.#hedge(a);
      }
    }
    const step = this.#step;
    if (step.retry && now >= step.retry.at) {
      const { route, mode } = step.retry;
      step.retry = undefined;
      this.#launch(route, mode);
    }
    if (!this.#winner && now >= step.budgetEnd) {
      const what = this.#said ? "the rest of the reply" : "an answer";
      const err = new ServiceFailure(`chat: no ${what} within ${d.chatTotalMs} ms`, "timeout", {
        cause: step.lastError,
      });
      for (const a of this.#live.splice(0)) this.#drop(a);
      throw err;
    }
  }

  #event(a: ChatAttempt, ev: SourceEvent): void {
    if (ev.type === "chunk") return;
    if (ev.type === "tool-call") {
      if (!a.passing) this.#wins(a);
      a.calls.push(ev.call);
      return;
    }
    if (a.passing) {
      this.#say(ev.text);
      return;
    }
    a.heard += ev.text;
    const m = afterPrefix(this.#said, a.heard);
    if (m.kind === "more") return;
    if (m.kind === "rest") {
      this.#wins(a);
      if (m.rest) this.#say(m.rest);
    } else if (a.mode === "continue") {
      this.#wins(a);
      this.#say(joinText(this.#said, a.heard));
    } else {
      // Asked again, the model worded it otherwise: ask it to continue what the caller has.
      this.#o.log?.debug(
        { said: this.#said.length },
        "chat: the new reply differs from what was said; asking to continue",
      );
      this.#remove(a);
      a.settle("succeeded");
      a.stop();
      this.#next(a.route, "continue");
    }
  }

  /** A request's stream ended: well (the reply is complete) or not. */
  #ended(a: ChatAttempt): void {
    if (a.error !== undefined) {
      this.#failed(a, a.error);
      return;
    }
    if (!a.passing) this.#wins(a);
    this.#remove(a);
    a.stop(); // its request is over: this only lets go of the turn's signal
    for (const call of a.calls) this.#out.push({ type: "tool-call", call });
    this.#done = true;
  }

  /** `a` gave the first new words (or its whole answer): its reply is the one used. */
  #wins(a: ChatAttempt): void {
    a.passing = true;
    this.#winner = a;
    this.#step.retry = undefined;
    a.settle("succeeded");
    for (const other of [...this.#live]) if (other !== a) this.#drop(other, true);
  }

  #say(text: string): void {
    if (!text) return;
    this.#said += text;
    this.#out.push({ type: "text", text });
  }

  #failed(a: ChatAttempt, err: unknown): void {
    const kind: FailureKind = failureKind(err);
    this.#remove(a);
    a.settle({ failed: kind, err });
    a.stop();
    this.#step.lastError = err;
    this.#o.log?.debug({ err: messageOf(err), kind, fallback: a.route.isFallback }, "chat request failed");
    if (a === this.#winner) {
      this.#winner = undefined;
      if (++this.#resumes > MAX_RESUMES) throw err;
      this.#newStep();
      // A target that just stalled is likely busy: the fallback, when there is one, takes it up.
      const fallback = this.#o.fallback;
      this.#launch(fallback && !a.route.isFallback ? fallback : this.#pick(), "fresh");
      return;
    }
    // Another request of this step is still on time: it may yet answer.
    if (this.#live.some((o) => !o.late) || this.#step.retry) return;
    this.#afterFailure(a, kind, err);
  }

  /** What follows a failed request when nothing else is on its way: retry, fallback or give up. */
  #afterFailure(a: ChatAttempt, kind: FailureKind, err: unknown): void {
    const step = this.#step;
    if (step.requests >= MAX_REQUESTS_PER_STEP) {
      if (this.#live.length === 0) throw err;
      return;
    }
    const now = this.#o.clock.now();
    const fallback = this.#o.fallback;
    const toFallback = fallback && !a.route.isFallback ? fallback : undefined;
    const wait = retryAfterOf(err) ?? 0;
    const fits = now + wait < step.budgetEnd;
    const again = kind !== "refused" && fits && (!toFallback || a.route.health.allow());
    if (again && wait > 0) step.retry = { at: now + wait, route: a.route, mode: a.mode };
    else if (again) this.#launch(a.route, a.mode);
    else if (toFallback) this.#launch(toFallback, a.mode);
    else if (this.#live.length === 0) throw err;
  }

  /** `a` is late: a second request beside it, to the fallback when there is one. */
  #hedge(a: ChatAttempt): void {
    this.#step.hedged = true;
    const fallback = this.#o.fallback;
    const route = fallback && !a.route.isFallback ? fallback : a.route;
    noteRecovery(this.#signal, "hedgedRequests");
    this.#o.onHedge?.();
    this.#launch(route, a.mode);
  }

  /** The words so far are not all: another request to get the next ones. */
  #next(route: ChatRoute, mode: AttemptMode): void {
    if (this.#step.requests >= MAX_REQUESTS_PER_STEP)
      throw new ServiceFailure("chat: too many requests", "other");
    this.#launch(route, mode);
  }

  /** The agent's own target, unless its circuit is open and there is a fallback. */
  #pick(): ChatRoute {
    const { primary, fallback } = this.#o;
    if (!fallback) return primary;
    return primary.health.allow() ? primary : fallback;
  }

  #launch(route: ChatRoute, mode: AttemptMode): void {
    this.#step.requests++;
    if (route.isFallback) {
      noteRecovery(this.#signal, "fallbacks");
      this.#o.onFallback?.();
    }
    const clock = this.#o.clock;
    const a = new ChatAttempt(route, mode, clock.now(), this.#signal);
    this.#live.push(a);
    const messages = mode === "continue" ? continuationMessages(this.#messages, this.#said) : this.#messages;
    void a.pump(
      messages,
      this.#tools,
      () => clock.now(),
      () => this.#wake(),
    );
  }

  #newStep(): void {
    const budgetEnd = this.#o.clock.now() + this.#o.deadlines.chatTotalMs;
    this.#step = { budgetEnd, requests: 0, hedged: false, retry: undefined, lastError: undefined };
  }

  /** Stops a request that is no longer needed; one that lost while late was a timeout. */
  #drop(a: ChatAttempt, lost = false): void {
    this.#remove(a);
    if (lost && a.late) a.settle({ failed: "timeout" });
    else a.settle("abandoned");
    a.stop();
  }

  #remove(a: ChatAttempt): void {
    const i = this.#live.indexOf(a);
    if (i >= 0) this.#live.splice(i, 1);
  }

  #wake(): void {
    if (this.#wakeUp) {
      const w = this.#wakeUp;
      this.#wakeUp = undefined;
      w();
    } else this.#woken = true;
  }

  /** Until a request sends something, or the next deadline. */
  async #sleep(): Promise<void> {
    if (this.#woken) {
      this.#woken = false;
      return;
    }
    const clock = this.#o.clock;
    const next = this.#nextDeadline();
    if (next !== undefined)
      this.#timer = clock.setTimeout(() => this.#wake(), Math.max(0, next - clock.now()));
    await new Promise<void>((resolve) => {
      this.#wakeUp = resolve;
    });
    clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#woken = false;
  }

  #nextDeadline(): number | undefined {
    const d = this.#o.deadlines;
    const times: number[] = [];
    for (const a of this.#live) {
      if (a.lastAt !== undefined) times.push(a.lastAt + d.chatGapMs);
      else if (!a.late) times.push(a.startedAt + d.chatFirstMs);
    }
    if (this.#step.retry) times.push(this.#step.retry.at);
    if (!this.#winner) times.push(this.#step.budgetEnd);
    return times.length ? Math.min(...times) : undefined;
  }
}
