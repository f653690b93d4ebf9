// One agent reply: chat stream → realtime TTS → the caller, with tool rounds in between.
// A turn may start preemptively (held: its audio waits until the caller's turn is
// confirmed), be cancelled before it is heard, paused and resumed around a backchannel,
// or interrupted, in which case it reports what the caller actually heard.
import type { ChatMessage, ToolCall } from "../api/types/index.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { heardText } from "./history.ts";
import { TurnPlayout } from "./playout.ts";
import { ReplySpeech } from "./reply-speech.ts";
import { type ChatRecovery, chatRecovery } from "./resilience/request-signals.ts";
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
  /** Set when the turn failed (its chat request, or every TTS session it could open). */
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
  /** A TTS session with no first audio this long after it was given a sentence is replaced, ms. */
  ttsFirstAudioMs?: number;
  log?: Logger;
}

export class AgentTurn {
  readonly timings: TurnTimings = {};
  readonly #deps: AgentTurnDeps;
  readonly #messages: ChatMessage[];
  readonly #added: ChatMessage[] = [];
  readonly #abort = new AbortController();
  readonly #playout: TurnPlayout;
  readonly #speech: ReplySpeech;
  readonly #toolCalls: ToolCallRequest[] = [];
  #chatRequests = 0;
  #generated = "";
  #audioComplete = false;
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
    this.#speech = new ReplySpeech(
      {
        openTts: deps.openTts,
        playout: this.#playout,
        format: deps.transport.output,
        clock: deps.clock,
        firstAudioMs: deps.ttsFirstAudioMs ?? 1500,
        flushSettleMs: deps.flushSettleMs ?? 1500,
        log: deps.log,
      },
      {
        sent: () => {
          this.timings.firstTextSentAt ??= deps.clock.now();
        },
        audio: () => {
          this.timings.firstAudioAt ??= deps.clock.now();
          this.#notePlay();
        },
        complete: () => {
          this.#audioComplete = true;
          this.checkDrained();
        },
        failed: (err) => {
          if (!this.#abort.signal.aborted) this.#fail(err);
        },
      },
    );
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

  /** Interrupted, cancelled or failed: the caller did not hear it to its end. */
  get cutShort(): boolean {
    return this.#interrupted || this.#cancelled || this.#error !== undefined;
  }

  /** Chat requests this turn made (stream() calls): one per tool round. */
  get chatRequests(): number {
    return this.#chatRequests;
  }

  /** The hedges and fallbacks of this turn's chat requests (turn-metrics.ts files them). */
  get chatRecovery(): ChatRecovery | undefined {
    return chatRecovery(this.#abort.signal);
  }

  /** TTS sessions opened in this turn to replace one cut mid-reply. */
  get ttsReopens(): number {
    return this.#speech.reopens;
  }

  /**
   * True while the reply is not over but the caller has heard all of it that came: its next audio
   * is on its way (a TTS session being replaced, a tool round).
   */
  get waitingForAudio(): boolean {
    return this.speaking && !this.#playout.hasUnplayed();
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
    this.#speech.start();
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
      if (!this.#abort.signal.aborted) this.#speech.end();
    } catch (err) {
      if (this.#abort.signal.aborted) return;
      this.#fail(err);
    }
  }

  /** One chat stream: a failure fails the turn (the chat port retries, hedges and falls back within its budget). */
  async #chatRound(mustAnswer: boolean): Promise<{ text: string; calls: ToolCallRequest[] }> {
    let text = "";
    const calls: ToolCallRequest[] = [];
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
  }

  #speak(text: string): void {
    this.#generated += text;
    this.#speech.speak(text);
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
    this.#speech.close();
  }

  #record(message: ChatMessage): void {
    this.#messages.push(message);
    this.#added.push(message);
  }

  #finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#speech.close();
    // Cut short (a barge-in, or a failure after part of it played): only what the caller heard.
    const partial = this.#interrupted || this.#error !== undefined;
    const heard = partial
      ? heardText(this.#speech.sentences, this.#playout.heardMs())
      : this.#generated.trim();
    const messages = [...this.#added];
    const finalWords = partial ? heard : this.#spokenAfterLastTool();
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
