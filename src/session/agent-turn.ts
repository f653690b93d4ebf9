// One agent reply: chat stream → realtime TTS → the caller, with tool rounds in between.
// A turn may start preemptively (held: its audio waits until the caller's turn is
// confirmed), be cancelled before it is heard, paused and resumed around a backchannel,
// or interrupted, in which case it reports what the caller actually heard.
import type { ChatMessage, ToolCall } from "../api/types/index.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { heardText, type SpokenSentence } from "./history.ts";
import { TurnPlayout } from "./playout.ts";
import type { ChatModel, ToolCallRequest, TtsStream } from "./services.ts";
import type { ToolBox, ToolOutcome } from "./tools.ts";
import type { CallTransport } from "./transport.ts";

export interface TurnTimings {
  chatStartAt?: number;
  firstTokenAt?: number;
  firstTextSentAt?: number;
  firstAudioAt?: number;
  releasedAt?: number;
  /** When the first audio was handed to the transport (released and available). */
  firstPlayAt?: number;
}

export interface AgentTurnResult {
  generated: string;
  heard: string;
  interrupted: boolean;
  cancelled: boolean;
  /** Messages the turn adds to the history: tool calls and results, then the spoken answer. */
  messages: ChatMessage[];
  toolCalls: ToolCallRequest[];
  /** A call-level action the model asked for (hang up, transfer), to run after the audio. */
  action?: Exclude<ToolOutcome, { kind: "result" }>;
  /** Set when the turn failed after its retries (chat or TTS unusable). */
  error?: string;
}

export interface AgentTurnDeps {
  chat: ChatModel;
  openTts: () => Promise<TtsStream>;
  tools: Pick<ToolBox, "definitions" | "run">;
  transport: CallTransport;
  clock: Clock;
  /** Max tool rounds before the model must answer in words. */
  maxToolRounds?: number;
  /** How long after `flushed` with no sentence open the audio counts as complete. */
  flushSettleMs?: number;
  log?: Logger;
}

const alnum = (s: string) => s.replace(/[^\p{L}\p{N}]/gu, "").length;

/** The service refused the request as such: sending it again would get the same answer. */
function refused(err: unknown): boolean {
  const status = (err as { status?: unknown })?.status;
  return typeof status === "number" && status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export class AgentTurn {
  readonly timings: TurnTimings = {};
  readonly #deps: AgentTurnDeps;
  readonly #messages: ChatMessage[];
  readonly #added: ChatMessage[] = [];
  readonly #abort = new AbortController();
  readonly #playout: TurnPlayout;
  readonly #sentences: SpokenSentence[] = [];
  readonly #toolCalls: ToolCallRequest[] = [];
  #tts: TtsStream | undefined;
  /** Text the model produced before the TTS session was ready, sent as soon as it is. */
  #unsent = "";
  #chatRequests = 0;
  #generated = "";
  #sentChars = 0;
  #spokenChars = 0;
  #openSentence: SpokenSentence | undefined;
  #textDone = false;
  #flushed = false;
  #audioComplete = false;
  #settleTimer: TimerHandle | undefined;
  #finished = false;
  #cancelled = false;
  #interrupted = false;
  #action: AgentTurnResult["action"];
  #error: string | undefined;
  #resolve!: (r: AgentTurnResult) => void;
  readonly done: Promise<AgentTurnResult>;
  /** Called once, when the first audio of the turn reaches the transport. */
  onFirstPlay: (() => void) | undefined;

  constructor(deps: AgentTurnDeps, messages: readonly ChatMessage[], opts: { held: boolean }) {
    this.#deps = deps;
    this.#messages = [...messages];
    this.#playout = new TurnPlayout(deps.transport, { held: opts.held });
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (!opts.held) this.timings.releasedAt = deps.clock.now();
  }

  get released(): boolean {
    return this.timings.releasedAt !== undefined;
  }

  /** True while the agent is audibly speaking or still has audio to come. */
  get speaking(): boolean {
    return this.released && !this.#finished && (this.#playout.hasUnplayed() || !this.#audioComplete);
  }

  /** Chat requests this turn sent: one per tool round, plus any retry. */
  get chatRequests(): number {
    return this.#chatRequests;
  }

  /** Times the caller heard silence mid-reply before more of its audio came (TurnPlayout.dryRuns). */
  get dryRuns(): number {
    return this.#playout.dryRuns;
  }

  /** Runs the turn; resolves `done` when it has been heard to the end, cancelled or interrupted. */
  start(): Promise<AgentTurnResult> {
    void this.#run();
    return this.done;
  }

  /** The caller's turn is confirmed: let the audio out. */
  release(): void {
    if (this.released || this.#finished) return;
    this.timings.releasedAt = this.#deps.clock.now();
    this.#playout.resume();
    this.#notePlay();
    this.checkDrained();
  }

  /** Discards a preemptive turn the caller never heard. */
  cancel(): void {
    if (this.#finished) return;
    this.#cancelled = true;
    this.#stopWork();
    this.#playout.stop();
    this.#finish();
  }

  /** Barge-in: stop speaking now and keep what was heard. */
  interrupt(): void {
    if (this.#finished) return;
    this.#interrupted = true;
    this.#stopWork();
    this.#playout.stop();
    this.#finish();
  }

  pause(): void {
    if (this.released) this.#playout.pause();
  }

  resume(): void {
    if (this.released) this.#playout.resume();
  }

  /** The transport's playout moved: finish once everything was heard. */
  checkDrained(): void {
    if (!this.#finished && this.released && this.#audioComplete && !this.#playout.hasUnplayed())
      this.#finish();
  }

  async #run(): Promise<void> {
    // The chat does not wait for the TTS session: a spare still opening (a turn right after
    // another) would otherwise put its handshake in front of the first token.
    const ttsReady = this.#startTts();
    try {
      const rounds = this.#deps.maxToolRounds ?? 3;
      for (let round = 0; round <= rounds && !this.#abort.signal.aborted; round++) {
        const { text, calls } = await this.#chatRound(round === rounds);
        if (calls.length === 0 || this.#abort.signal.aborted) break;
        const toolCalls: ToolCall[] = calls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }));
        this.#record({ role: "assistant", content: text || null, tool_calls: toolCalls });
        for (const call of calls) {
          this.#toolCalls.push(call);
          const outcome = await this.#deps.tools.run(call, this.#abort.signal, (text) =>
            this.#speak(`${text.trim()} `),
          );
          if (outcome.kind === "result") {
            this.#record({ role: "tool", tool_call_id: call.id, content: outcome.content });
          } else {
            this.#action = outcome;
            this.#record({ role: "tool", tool_call_id: call.id, content: "ok" });
          }
        }
        if (this.#action) break;
      }
      this.#textDone = true;
      const tts = await ttsReady;
      if (!this.#abort.signal.aborted) tts.flush();
      this.#checkComplete();
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      this.#fail(err);
    }
  }

  /** The turn's TTS session, read from as soon as it is open; a failure to open fails the turn. */
  #startTts(): Promise<TtsStream> {
    const ready = this.#openTtsWithRetry().then((tts) => {
      // Cancelled or interrupted while the session opened: nobody else will close it.
      if (this.#abort.signal.aborted) {
        tts.close();
        throw new Error("turn ended while its TTS session opened");
      }
      this.#tts = tts;
      if (this.#unsent) this.#sendText(tts, this.#unsent);
      this.#unsent = "";
      void this.#consumeTts(tts);
      return tts;
    });
    ready.catch((err: unknown) => {
      if (!this.#abort.signal.aborted) this.#fail(err);
    });
    return ready;
  }

  /**
   * One chat stream; retried once at once if it fails before any text was spoken, unless the
   * service refused the request itself (a 4xx other than a timeout or rate limit: the same
   * request would be refused again, and the caller would wait a round trip for nothing).
   */
  async #chatRound(mustAnswer: boolean): Promise<{ text: string; calls: ToolCallRequest[] }> {
    for (let attempt = 0; ; attempt++) {
      let text = "";
      const calls: ToolCallRequest[] = [];
      try {
        this.timings.chatStartAt ??= this.#deps.clock.now();
        this.#chatRequests++;
        const tools = mustAnswer ? [] : this.#deps.tools.definitions();
        for await (const ev of this.#deps.chat.stream(this.#messages, tools, this.#abort.signal)) {
          if (this.#abort.signal.aborted) break;
          if (ev.type === "text") {
            if (!ev.text) continue;
            this.timings.firstTokenAt ??= this.#deps.clock.now();
            text += ev.text;
            this.#speak(ev.text);
          } else {
            calls.push(ev.call);
          }
        }
        return { text, calls };
      } catch (err) {
        if (this.#abort.signal.aborted || text || attempt >= 1 || refused(err)) throw err;
        this.#deps.log?.warn({ err: (err as Error).message }, "chat request failed: sending it again");
      }
    }
  }

  #speak(text: string): void {
    this.#generated += text;
    this.#sentChars += alnum(text);
    if (this.#tts) this.#sendText(this.#tts, text);
    else this.#unsent += text;
  }

  #sendText(tts: TtsStream, text: string): void {
    this.timings.firstTextSentAt ??= this.#deps.clock.now();
    tts.sendText(text);
  }

  async #openTtsWithRetry(): Promise<TtsStream> {
    try {
      return await this.#deps.openTts();
    } catch {
      return await this.#deps.openTts();
    }
  }

  async #consumeTts(tts: TtsStream): Promise<void> {
    try {
      for await (const ev of tts.events) {
        if (this.#finished) return;
        this.#deps.clock.clearTimeout(this.#settleTimer);
        if (ev.type === "sentence-start") {
          this.#openSentence = { text: ev.text, startMs: this.#playout.turnMs, durationMs: 0 };
          this.#sentences.push(this.#openSentence);
          this.#spokenChars += alnum(ev.text);
        } else if (ev.type === "audio") {
          this.timings.firstAudioAt ??= this.#deps.clock.now();
          if (this.#openSentence) this.#openSentence.durationMs += ev.durationMs;
          this.#playout.push(ev.audio);
          this.#notePlay();
        } else if (ev.type === "sentence-end") {
          this.#openSentence = undefined;
        } else {
          this.#flushed = true;
        }
        this.#checkComplete();
      }
      // The server closed the session: whatever it sent is all the audio there is.
      if (!this.#finished && this.#textDone) this.#markComplete();
      else if (!this.#finished) this.#fail(new Error("TTS session closed before the turn's text was spoken"));
    } catch (err) {
      if (!this.#finished) this.#fail(err);
    }
  }

  #checkComplete(): void {
    if (this.#audioComplete || !this.#textDone || !this.#flushed || this.#openSentence) return;
    if (this.#spokenChars >= this.#sentChars) {
      this.#markComplete();
      return;
    }
    // Text normalisation on the server can make the counts differ: settle on a quiet spell.
    this.#deps.clock.clearTimeout(this.#settleTimer);
    this.#settleTimer = this.#deps.clock.setTimeout(
      () => this.#markComplete(),
      this.#deps.flushSettleMs ?? 1500,
    );
  }

  #markComplete(): void {
    if (this.#audioComplete) return;
    this.#audioComplete = true;
    this.checkDrained();
  }

  #notePlay(): void {
    if (this.timings.firstPlayAt !== undefined || !this.released || this.#playout.turnMs === 0) return;
    this.timings.firstPlayAt = this.#deps.clock.now();
    this.onFirstPlay?.();
  }

  #fail(err: unknown): void {
    this.#error = (err as Error)?.message ?? String(err);
    this.#stopWork();
    // Keep what was already spoken playing: the session follows it with an apology.
    if (!this.released) this.#playout.stop();
    this.#audioComplete = true;
    if (!this.released || !this.#playout.hasUnplayed()) this.#finish();
  }

  #stopWork(): void {
    this.#abort.abort();
    this.#deps.clock.clearTimeout(this.#settleTimer);
    this.#tts?.close();
  }

  #record(message: ChatMessage): void {
    this.#messages.push(message);
    this.#added.push(message);
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#deps.clock.clearTimeout(this.#settleTimer);
    if (!this.#interrupted && !this.#cancelled && !this.#error) this.#tts?.close();
    const heardMs = this.#playout.heardMs();
    const heard = this.#interrupted ? heardText(this.#sentences, heardMs) : this.#generated.trim();
    const messages = [...this.#added];
    const finalWords = this.#interrupted ? heard : this.#spokenAfterLastTool();
    if (finalWords) messages.push({ role: "assistant", content: finalWords });
    this.#resolve({
      generated: this.#generated.trim(),
      heard: this.#cancelled ? "" : heard,
      interrupted: this.#interrupted,
      cancelled: this.#cancelled,
      messages: this.#cancelled ? [] : messages,
      toolCalls: this.#toolCalls,
      ...(this.#action ? { action: this.#action } : {}),
      ...(this.#error ? { error: this.#error } : {}),
    });
  }

  /** The words spoken after the last tool round (earlier words sit in the tool-call message). */
  #spokenAfterLastTool(): string {
    let before = "";
    for (const m of this.#added) if (m.role === "assistant" && m.content) before += m.content;
    return this.#generated.slice(before.length).trim();
  }
}

/** Fixed words (greeting, re-prompt, goodbye) spoken through the same path as model replies. */
export function fixedReply(text: string): ChatModel {
  return {
    async *stream() {
      yield { type: "text", text };
    },
  };
}
