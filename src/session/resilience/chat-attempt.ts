// One request of a resilient chat reply: its own abort signal, what it has sent that was not yet
// handled, and when it last sent anything (the deadlines run on that). Its stream is read as fast
// as it comes, whatever the reply's reader is doing, so a stall is seen when it happens.
import type { ChatMessage, ChatTool } from "../../api/types/index.ts";
import type { ChatEvent, ToolCallRequest } from "../services.ts";
import { requestController } from "./request-signals.ts";
import type { TargetHealth } from "./service-health.ts";

/**
 * What a chat target streams: the session's chat events, and `chunk` for a piece of the answer
 * that carried no text (a role, a tool call's arguments as they come), which shows the stream is
 * alive. A plain ChatModel is a ChatSource.
 */
export type SourceEvent = ChatEvent | { type: "chunk" };

export interface ChatSource {
  stream(
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[],
    signal: AbortSignal,
  ): AsyncIterable<SourceEvent>;
}

/** A chat target: where its requests go, and its health (circuit, failures). */
export interface ChatRoute {
  readonly source: ChatSource;
  readonly health: TargetHealth;
  /** The agent's fallback rather than its own model. */
  readonly isFallback: boolean;
}

/** `fresh`: the conversation asked again; `continue`: asked to go on from what was said. */
export type AttemptMode = "fresh" | "continue";

export class ChatAttempt {
  readonly route: ChatRoute;
  readonly mode: AttemptMode;
  readonly startedAt: number;
  readonly #ctrl: AbortController;
  /** Events read, not yet handled. */
  readonly queue: SourceEvent[] = [];
  /** When it last sent anything; undefined before its first chunk. */
  lastAt: number | undefined;
  /** Its first chunk is past the deadline (a hedge may have started beside it). */
  late = false;
  /** Its stream ended: cleanly (`error` undefined) or not. */
  ended = false;
  error: unknown;
  /** Its text while it is compared with what was said (see spoken-prefix.ts). */
  heard = "";
  /** Past the comparison: its text goes to the caller as it comes. */
  passing = false;
  /** Tool calls, handed on only when its stream ends well. */
  readonly calls: ToolCallRequest[] = [];
  #settled: "none" | "answered" | "ended" = "none";

  constructor(route: ChatRoute, mode: AttemptMode, startedAt: number, parent: AbortSignal) {
    this.route = route;
    this.mode = mode;
    this.startedAt = startedAt;
    this.#ctrl = requestController(parent);
  }

  get signal(): AbortSignal {
    return this.#ctrl.signal;
  }

  /** Reads the stream into `queue`, calling `wake` at each event and at its end. */
  async pump(
    messages: readonly ChatMessage[],
    tools: readonly ChatTool[],
    now: () => number,
    wake: () => void,
  ): Promise<void> {
    try {
      for await (const ev of this.route.source.stream(messages, tools, this.signal)) {
        if (this.signal.aborted) return;
        this.lastAt = now();
        this.queue.push(ev);
        wake();
      }
    } catch (err) {
      if (this.signal.aborted) return;
      this.error = err ?? new Error("chat stream failed");
    }
    this.ended = true;
    wake();
  }

  /**
   * Its outcome told to its target's health: a success once (its first words), and a failure or
   * abandonment once (a stream that answered may still stall later); nothing after those.
   */
  settle(
    outcome: "succeeded" | "abandoned" | { failed: Parameters<TargetHealth["failed"]>[0]; err?: unknown },
  ): void {
    if (this.#settled === "ended") return;
    if (outcome === "succeeded") {
      if (this.#settled === "none") this.route.health.succeeded();
      this.#settled = "answered";
      return;
    }
    const answered = this.#settled === "answered";
    this.#settled = "ended";
    if (outcome !== "abandoned") this.route.health.failed(outcome.failed, outcome.err);
    else if (!answered) this.route.health.abandoned();
  }

  /** Stops its request (a lost race, a failure, the reply over). */
  stop(): void {
    this.#ctrl.abort(new Error("chat request no longer needed"));
  }
}
