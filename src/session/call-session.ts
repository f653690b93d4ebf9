// The per-call actor. It listens (VAD → end of turn), thinks (ASR → chat) and speaks
// (TTS → transport), starting the work preemptively on a short silence but letting audio
// out only once the caller's turn is confirmed, and yields at once when the caller talks
// over it. Every timer goes through the injected clock; every event arrives on one
// thread, so state changes need no locks, only stale-result checks.
import { Resampler } from "../../codecs/resample.ts";
import type { ChatMessage } from "../api/types/index.ts";
import type { Logger } from "../log.ts";
import { audioMs, concatAudio } from "./agent-audio.ts";
import { AgentTurn, type AgentTurnResult } from "./agent-turn.ts";
import type { Clock, TimerHandle } from "./clock.ts";
import type { SessionConfig } from "./config.ts";
import { soundsUnfinished } from "./end-of-turn.ts";
import { ConversationHistory } from "./history.ts";
import type { ChatModel, SessionServices, TtsStream } from "./services.ts";
import type { SpeechDetector, SpeechDetectorFactory, SpeechEvent } from "./speech-detector.ts";
import { ToolBox } from "./tools.ts";
import type { CallEvent, TranscriptStore, TurnMetrics } from "./transcript.ts";
import type { AgentAudio, CallTransport } from "./transport.ts";
import { TtsPool } from "./tts-pool.ts";
import { AudioWindow } from "./utterance.ts";
import { UtteranceUpload } from "./utterance-upload.ts";

const VAD_RATE = 16000;

export interface SessionDeps {
  transport: CallTransport;
  services: SessionServices;
  createSpeechDetector: SpeechDetectorFactory;
  clock: Clock;
  config: SessionConfig;
  log: Logger;
  transcripts: TranscriptStore;
  /** Per-turn figures, e.g. for Prometheus. */
  onTurnMetrics?: (m: TurnMetrics) => void;
  onEnd?: (reason: string) => void;
}

/** How long an undecided onset may hold a confirmed end of turn back: longer than any VAD verdict. */
const ONSET_WAIT_MAX_MS = 300;
/** How often a held end of turn looks again whether the onset became speech or died away. */
const ONSET_RECHECK_MS = 20;

/** A caller utterance on its way to becoming a turn. */
interface UserTurnJob {
  id: number;
  speechEndAt: number;
  text?: string;
  asrMs?: number;
  failed?: string;
  confirmed: boolean;
  confirmedAt?: number;
  /** When confirming was first put off because the caller seemed to be starting again. */
  onsetWaitFrom?: number;
  /** The user turn is in the history and the record (once its reply is first heard, or done). */
  committed?: boolean;
  turn?: AgentTurn;
  source: "speech" | "dtmf";
}

/** A caller utterance: where it lies in the audio window, and its upload if one was made. */
interface Utterance {
  fromMs: number;
  toMs: number;
  upload: UtteranceUpload | undefined;
}

/** Fixed words (greeting, re-prompt, goodbye) spoken through the same path as model replies. */
function fixedReply(text: string): ChatModel {
  return {
    async *stream() {
      yield { type: "text", text };
    },
  };
}

export class CallSession {
  readonly #d: SessionDeps;
  readonly #log: Logger;
  readonly #history: ConversationHistory;
  readonly #tools: ToolBox;
  readonly #tts: TtsPool;
  readonly #audio = new AudioWindow(VAD_RATE, 60);
  readonly #resampler: Resampler | undefined;
  #upsampled = new Int16Array(0);
  readonly #detector: SpeechDetector;
  readonly #startedAt: number;
  #ended = false;

  // Caller side.
  #userSpeaking = false;
  #utteranceStartMs = 0;
  #speechStartAt = 0;
  #job: UserTurnJob | undefined;
  #jobSeq = 0;
  /** The utterance being spoken, already on its way to recognition. */
  #upload: UtteranceUpload | undefined;
  /** Aborted when the call ends: whatever is still uploading stops. */
  readonly #callAbort = new AbortController();
  #eouMinTimer: TimerHandle | undefined;
  #eouMaxTimer: TimerHandle | undefined;
  #minEouElapsed = false;

  // Agent side.
  #agent: AgentTurn | undefined;
  #bargeStartAt: number | undefined;
  #bargePauseTimer: TimerHandle | undefined;
  #bargeConfirmTimer: TimerHandle | undefined;
  #bargeClearedAt: number | undefined;
  #continueTimer: TimerHandle | undefined;
  /** An early answer paused because the VAD heard a possible onset (see #watchOnset). */
  #onsetPaused: AgentTurn | undefined;
  #commitTimer: TimerHandle | undefined;
  #pendingAction: AgentTurnResult["action"];

  // Silence handling and limits.
  #repromptTimer: TimerHandle | undefined;
  #reprompts = 0;
  #maxTimer: TimerHandle | undefined;
  #dtmf = "";
  #dtmfTimer: TimerHandle | undefined;
  #apology: AgentAudio | undefined;

  constructor(deps: SessionDeps) {
    this.#d = deps;
    const { transport, config } = deps;
    this.#log = deps.log.child({ callId: transport.info.callId });
    this.#history = new ConversationHistory(config.systemPrompt);
    this.#tools = new ToolBox(config.httpTools, config.transferTarget);
    this.#tts = new TtsPool(deps.services.tts, transport.output, this.#log);
    if (transport.inputRate !== VAD_RATE) this.#resampler = new Resampler(transport.inputRate, VAD_RATE);
    this.#detector = deps.createSpeechDetector((e) => this.#onSpeech(e));
    this.#startedAt = deps.clock.now();
  }

  get history(): ConversationHistory {
    return this.#history;
  }

  /** Nobody is speaking and no turn is in the works. */
  get idle(): boolean {
    return !this.#userSpeaking && !this.#job && !this.#agent;
  }

  /** Attaches to the transport, greets the caller and starts listening. */
  start(): void {
    const { transport, config, clock } = this.#d;
    const info = transport.info;
    this.#record({
      type: "call-start",
      at: new Date().toISOString(),
      callId: info.callId,
      transport: info.transport,
      ...(info.from ? { from: info.from } : {}),
      ...(info.to ? { to: info.to } : {}),
    });
    this.#log.info({ from: info.from, to: info.to, transport: info.transport }, "call started");
    transport.attach({
      audio: (frame) => this.#onAudio(frame),
      dtmf: (digit) => this.#onDtmf(digit),
      played: () => this.#agent?.checkDrained(),
      ended: (reason) => this.end(reason),
    });
    this.#maxTimer = clock.setTimeout(
      () => void this.#sayAndHangUp(config.goodbyeText, "max call duration"),
      config.maxCallMs,
    );
    this.#tts.warm();
    void this.#prepareApology();
    if (config.greeting) this.#speakFixed(config.greeting);
    else this.#startAgent(this.#history.messages(), { kind: "reply" }, false);
  }

  /** Ends the session (caller hung up, or we did). Idempotent. */
  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const { clock } = this.#d;
    for (const t of [this.#eouMinTimer, this.#eouMaxTimer, this.#bargePauseTimer, this.#bargeConfirmTimer]) {
      clock.clearTimeout(t);
    }
    for (const t of [
      this.#repromptTimer,
      this.#maxTimer,
      this.#dtmfTimer,
      this.#continueTimer,
      this.#commitTimer,
    ]) {
      clock.clearTimeout(t);
    }
    // The playing reply is interrupted (and filed with what was heard) before any held one is dropped.
    this.#agent?.interrupt();
    this.#job?.turn?.cancel();
    this.#upload?.abort();
    this.#callAbort.abort();
    this.#detector.close();
    this.#tts.close();
    const durationMs = Math.round(clock.now() - this.#startedAt);
    this.#record({ type: "call-end", at: new Date().toISOString(), reason, durationMs });
    this.#log.info({ reason, durationMs }, "call ended");
    this.#d.onEnd?.(reason);
  }

  // ---- caller audio and turn-taking -------------------------------------------------

  #onAudio(frame: Int16Array): void {
    if (this.#ended) return;
    let pcm = frame;
    if (this.#resampler) {
      // One buffer per call: the window and the VAD both copy what they are given.
      // Frames are all 20 ms, so one buffer of exactly the output's size serves every frame
      // (pushInto writes outputLength samples) and no view is made per frame.
      const need = this.#resampler.outputLength(frame.length);
      if (this.#upsampled.length !== need) this.#upsampled = new Int16Array(need);
      this.#resampler.pushInto(frame, this.#upsampled);
      pcm = this.#upsampled;
    }
    this.#audio.write(pcm);
    this.#upload?.feed();
    this.#detector.push(pcm);
    if (!this.#userSpeaking) this.#watchOnset();
  }

  /**
   * While an early answer has just begun (the caller's pause may be mid-sentence), a possible onset
   * pauses it at once: speech-start comes 100–150 ms after the onset, and until then the caller who
   * goes on would hear the agent over them. If the onset dies away without becoming speech (a
   * click, a breath), the answer goes on from where it stopped.
   */
  #watchOnset(): void {
    const pending = this.#detector.onsetPending();
    if (pending && !this.#onsetPaused) {
      const answer = this.#earlyAnswer(this.#d.clock.now());
      if (!answer) return;
      answer.pause();
      this.#onsetPaused = answer;
      this.#log.debug("possible onset during the early answer: paused");
    } else if (!pending && this.#onsetPaused) {
      const answer = this.#onsetPaused;
      this.#onsetPaused = undefined;
      if (this.#agent === answer) answer.resume();
      this.#log.debug("the onset died away: early answer resumed");
    }
  }

  /**
   * The reply being heard when the caller makes a sound at clock time `at`, if that is right after
   * the pause it answers (the caller may yet be going on) and the user turn is not committed.
   */
  #earlyAnswer(at: number): AgentTurn | undefined {
    const job = this.#job;
    const agent = this.#agent;
    if (!job || job.committed || !agent || agent !== job.turn || agent.timings.firstPlayAt === undefined)
      return;
    return at - job.speechEndAt < this.#d.config.turn.maxEndOfTurnMs ? agent : undefined;
  }

  /** Clock time at which something at stream position `atMs` happened. */
  #clockAt(atMs: number): number {
    return this.#d.clock.now() - Math.max(0, this.#audio.nowMs - atMs);
  }

  #onSpeech(e: SpeechEvent): void {
    if (this.#ended) return;
    this.#log.debug({ atMs: Math.round(e.atMs), streamMs: Math.round(this.#audio.nowMs) }, e.type);
    if (e.type === "speech-start") {
      this.#onSpeechStart(e.atMs);
      // Whatever the speech turns out to be, recognition starts now on the utterance so far
      // (after a mid-sentence pause, from the first part's start).
      this.#upload?.abort();
      const { services } = this.#d;
      this.#upload = new UtteranceUpload(
        services.asr.open(VAD_RATE, this.#callAbort.signal),
        this.#audio,
        this.#utteranceStartMs,
      );
    } else this.#onSpeechEnd(e.atMs);
  }

  #onSpeechStart(atMs: number): void {
    const { clock, config } = this.#d;
    // The onset became speech: what follows decides, as if it had been heard at once.
    this.#onsetPaused = undefined;
    clock.clearTimeout(this.#repromptTimer);
    this.#reprompts = 0;
    this.#userSpeaking = true;
    this.#speechStartAt = this.#clockAt(atMs);
    const agent = this.#agent;
    const early = this.#earlyAnswer(this.#speechStartAt);
    if (early) {
      // The caller goes on right after the agent began to answer: the pause was not the end of
      // the turn. The agent falls silent at once; unless it is only a click (then it resumes),
      // the answer is dropped and the same utterance (its start is kept) goes on, so the words
      // are recognized as one.
      early.pause();
      const since = clock.now() - this.#speechStartAt;
      this.#continueTimer = clock.setTimeout(() => {
        this.#continueTimer = undefined;
        this.#log.info("caller went on after a pause: dropping the early answer");
        this.#note("early answer dropped: the caller was still speaking");
        early.cancel();
        if (this.#agent === early) this.#agent = undefined;
        this.#dropJob();
      }, config.turn.bargeInMinMs - since);
      return;
    }
    if (agent?.speaking && agent.timings.firstPlayAt !== undefined) {
      // Talking over the agent: pause soon, interrupt if it goes on, else resume.
      this.#utteranceStartMs = Math.max(0, atMs - config.turn.prerollMs);
      this.#bargeStartAt = this.#speechStartAt;
      const since = clock.now() - this.#speechStartAt;
      this.#bargePauseTimer = clock.setTimeout(() => this.#bargePause(), config.turn.bargeInMinMs - since);
      this.#bargeConfirmTimer = clock.setTimeout(
        () => this.#bargeConfirm(),
        config.turn.bargeInConfirmMs - since,
      );
      return;
    }
    if (this.#job && !this.#job.confirmed) {
      // The caller went on after a pause: the preemptive work was premature.
      this.#log.debug({ job: this.#job.id }, "caller resumed: dropping preemptive turn");
      this.#dropJob();
      return; // keep the utterance start: the pause was mid-sentence
    }
    if (
      this.#job?.confirmed &&
      agent &&
      agent === this.#job.turn &&
      agent.timings.firstPlayAt === undefined
    ) {
      // Confirmed but not yet heard: still just a pause to the caller. Merge.
      this.#log.debug("caller resumed before the agent spoke: merging utterances");
      agent.cancel();
      this.#agent = undefined;
      this.#dropJob();
      return;
    }
    this.#utteranceStartMs = Math.max(0, atMs - config.turn.prerollMs);
  }

  #onSpeechEnd(atMs: number): void {
    const { clock, config } = this.#d;
    this.#userSpeaking = false;
    const upload = this.#upload;
    this.#upload = undefined;
    if (this.#continueTimer) {
      // Too short to be words (a click, a breath): the answer goes on.
      clock.clearTimeout(this.#continueTimer);
      this.#continueTimer = undefined;
      upload?.abort();
      this.#agent?.resume();
      return;
    }
    if (this.#bargeStartAt !== undefined) {
      if (this.#bargeConfirmTimer) {
        // Short: a backchannel or a cough. The agent goes on.
        upload?.abort();
        this.#endBargeIn();
        this.#agent?.resume();
        this.#log.info("short speech over the agent: resuming");
        this.#record({ type: "barge-in", at: new Date().toISOString(), outcome: "resumed" });
        this.#scheduleReprompt();
        return;
      }
      this.#bargeStartAt = undefined; // interrupted for good: this is now a normal user turn
    }
    const speechEndAt = this.#clockAt(atMs);
    this.#startJob({ fromMs: this.#utteranceStartMs, toMs: atMs + 60, upload }, speechEndAt);
    const since = clock.now() - speechEndAt;
    this.#minEouElapsed = false;
    this.#eouMinTimer = clock.setTimeout(() => {
      this.#minEouElapsed = true;
      this.#maybeConfirm();
    }, config.turn.minEndOfTurnMs - since);
    this.#eouMaxTimer = clock.setTimeout(() => this.#confirm(), config.turn.maxEndOfTurnMs - since);
  }

  #startJob(utterance: Utterance, speechEndAt: number): void {
    const job: UserTurnJob = { id: ++this.#jobSeq, speechEndAt, confirmed: false, source: "speech" };
    this.#job = job;
    void this.#recognize(job, utterance);
  }

  /**
   * The utterance's transcript: from its upload, which ends now, or (with no upload, or when it
   * failed) from one request with the utterance cut out of the window.
   */
  async #recognize(job: UserTurnJob, utterance: Utterance): Promise<void> {
    const { services, clock } = this.#d;
    const t0 = clock.now();
    const signal = AbortSignal.timeout(15_000);
    let text: string | undefined;
    for (let attempt = 0; attempt < 2 && text === undefined; attempt++) {
      try {
        if (attempt === 0 && utterance.upload) text = await utterance.upload.end();
        else {
          const audio = this.#audio.slice(utterance.fromMs, utterance.toMs);
          text = await services.asr.recognize(audio, VAD_RATE, signal);
        }
      } catch (err) {
        this.#log.warn({ err: (err as Error).message, attempt }, "speech recognition failed");
        if (attempt === 1) job.failed = (err as Error).message;
      }
    }
    if (this.#job !== job || this.#ended) return;
    job.asrMs = clock.now() - t0;
    job.text = text?.trim() ?? "";
    this.#log.debug({ text: job.text, asrMs: Math.round(job.asrMs) }, "recognized");
    if (job.failed) {
      if (job.confirmed) this.#apologize(job, "speech recognition failed");
      return;
    }
    if (job.text) {
      const messages = [...this.#history.messages(), { role: "user" as const, content: job.text }];
      job.turn = this.#startAgent(messages, { kind: "reply", job }, !job.confirmed);
    }
    if (job.confirmed) this.#onConfirmedJobReady(job);
    else this.#maybeConfirm();
  }

  /** At the short timeout, confirm if the words sound finished; else wait for the long one. */
  #maybeConfirm(): void {
    const job = this.#job;
    if (!job || job.confirmed || !this.#minEouElapsed || job.text === undefined) return;
    if (job.failed || !soundsUnfinished(job.text)) this.#confirm();
  }

  #confirm(): void {
    const { clock } = this.#d;
    clock.clearTimeout(this.#eouMinTimer);
    clock.clearTimeout(this.#eouMaxTimer);
    const job = this.#job;
    if (!job || job.confirmed || this.#userSpeaking) return;
    if (this.#detector.onsetPending()) {
      // The caller may be going on: sound is arriving that the VAD has not yet called speech (it
      // does so only 100–150 ms after the onset). Answering now would talk over them, so wait for
      // the VAD's verdict: speech-start drops this job, anything else confirms it.
      job.onsetWaitFrom ??= clock.now();
      if (clock.now() - job.onsetWaitFrom < ONSET_WAIT_MAX_MS) {
        this.#eouMaxTimer = clock.setTimeout(() => this.#confirm(), ONSET_RECHECK_MS);
        return;
      }
    }
    job.confirmed = true;
    this.#log.debug({ job: job.id, eouDelayMs: Math.round(clock.now() - job.speechEndAt) }, "end of turn");
    job.confirmedAt = clock.now();
    if (job.text !== undefined) this.#onConfirmedJobReady(job);
  }

  #onConfirmedJobReady(job: UserTurnJob): void {
    if (job.failed) {
      this.#apologize(job, "speech recognition failed");
      return;
    }
    if (!job.text) {
      this.#log.debug("no words recognized: ignoring the noise");
      this.#job = undefined;
      this.#scheduleReprompt();
      return;
    }
    this.#log.info({ text: job.text }, "caller said");
    if (this.#agent && this.#agent !== job.turn) this.#agent.interrupt();
    this.#agent = job.turn;
    if (job.turn) {
      // Until the reply is heard the caller may still go on (then the turns merge): only then is
      // the user turn part of the conversation.
      job.turn.onFirstPlay = () => {
        this.#commitTimer = this.#d.clock.setTimeout(
          () => this.#commitUser(job),
          this.#d.config.turn.resumeGraceMs,
        );
      };
      job.turn.release();
    } else {
      this.#commitUser(job);
    }
  }

  #commitUser(job: UserTurnJob): void {
    this.#d.clock.clearTimeout(this.#commitTimer);
    if (job.committed || !job.text) return;
    job.committed = true;
    this.#history.addUser(job.text);
    this.#record({ type: "user", at: new Date().toISOString(), text: job.text, source: job.source });
  }

  #dropJob(): void {
    const { clock } = this.#d;
    clock.clearTimeout(this.#eouMinTimer);
    clock.clearTimeout(this.#eouMaxTimer);
    if (!this.#job?.committed) clock.clearTimeout(this.#commitTimer);
    this.#job?.turn?.cancel();
    this.#job = undefined;
  }

  // ---- barge-in ---------------------------------------------------------------------

  #bargePause(): void {
    this.#bargePauseTimer = undefined;
    if (!this.#agent || this.#bargeStartAt === undefined) return;
    this.#agent.pause();
    this.#bargeClearedAt = this.#d.clock.now();
    this.#log.debug("caller speaking over the agent: paused");
  }

  #bargeConfirm(): void {
    this.#bargeConfirmTimer = undefined;
    const agent = this.#agent;
    if (!agent || this.#bargeStartAt === undefined) return;
    this.#bargeClearedAt ??= this.#d.clock.now();
    this.#log.info(
      { bargeInMs: Math.round(this.#bargeClearedAt - this.#bargeStartAt) },
      "caller interrupted the agent",
    );
    this.#record({ type: "barge-in", at: new Date().toISOString(), outcome: "interrupted" });
    agent.interrupt(); // its done handler records what was heard
  }

  #endBargeIn(): void {
    const { clock } = this.#d;
    clock.clearTimeout(this.#bargePauseTimer);
    clock.clearTimeout(this.#bargeConfirmTimer);
    this.#bargePauseTimer = undefined;
    this.#bargeConfirmTimer = undefined;
    this.#bargeStartAt = undefined;
    this.#bargeClearedAt = undefined;
  }

  // ---- agent turns ------------------------------------------------------------------

  #startAgent(
    messages: readonly ChatMessage[],
    meta: { kind: "reply" | "fixed"; job?: UserTurnJob },
    held: boolean,
    chat: ChatModel = this.#d.services.chat,
  ): AgentTurn {
    const { transport, clock } = this.#d;
    const turn = new AgentTurn(
      { chat, openTts: () => this.#tts.take(), tools: this.#tools, transport, clock },
      messages,
      { held },
    );
    if (!held) {
      this.#agent?.interrupt();
      this.#agent = turn;
    }
    clock.clearTimeout(this.#repromptTimer);
    void turn.start().then((r) => this.#onAgentDone(turn, meta, r));
    return turn;
  }

  #speakFixed(text: string): void {
    this.#startAgent(this.#history.messages(), { kind: "fixed" }, false, fixedReply(text));
  }

  #onAgentDone(
    turn: AgentTurn,
    meta: { kind: "reply" | "fixed"; job?: UserTurnJob },
    r: AgentTurnResult,
  ): void {
    if (r.cancelled) return;
    if (meta.job) this.#commitUser(meta.job);
    for (const m of r.messages) {
      if (m.role === "assistant") this.#history.addAssistant(m.content ?? "", m.tool_calls);
      else if (m.role === "tool") this.#history.addToolResult(m.tool_call_id, m.content);
    }
    const metrics = this.#metrics(turn, meta.job, r);
    this.#record({
      type: "assistant",
      at: new Date().toISOString(),
      generated: r.generated,
      heard: r.heard,
      interrupted: r.interrupted,
      toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
      metrics,
      ...(r.error ? { error: r.error } : {}),
    });
    this.#log.info(
      {
        heard: r.heard,
        interrupted: r.interrupted || undefined,
        tools: r.toolCalls.map((c) => c.name),
        ...metrics,
      },
      r.interrupted ? "agent interrupted" : "agent said",
    );
    if (meta.kind === "reply") this.#d.onTurnMetrics?.(metrics);
    if (this.#agent === turn) this.#agent = undefined;
    if (meta.job && this.#job === meta.job) this.#job = undefined;
    if (this.#bargeStartAt !== undefined && r.interrupted) this.#endBargeIn();
    if (this.#ended) return;
    if (r.error) {
      this.#apologize(meta.job, r.error);
      return;
    }
    if (r.action) {
      this.#pendingAction = r.action;
      void this.#runAction();
      return;
    }
    if (!r.interrupted) this.#scheduleReprompt();
  }

  #metrics(turn: AgentTurn, job: UserTurnJob | undefined, r: AgentTurnResult): TurnMetrics {
    const t = turn.timings;
    const m: TurnMetrics = {};
    const confirmedAt = job?.confirmedAt;
    if (job && confirmedAt !== undefined) m.eouDelayMs = Math.round(confirmedAt - job.speechEndAt);
    if (job?.asrMs !== undefined) m.asrMs = Math.round(job.asrMs);
    if (t.chatStartAt !== undefined && t.firstTokenAt !== undefined)
      m.llmTtftMs = Math.round(t.firstTokenAt - t.chatStartAt);
    if (t.firstTextSentAt !== undefined && t.firstAudioAt !== undefined) {
      m.ttsFirstAudioMs = Math.round(t.firstAudioAt - t.firstTextSentAt);
    }
    if (job && t.firstPlayAt !== undefined) m.voiceToVoiceMs = Math.round(t.firstPlayAt - job.speechEndAt);
    if (r.interrupted && this.#bargeStartAt !== undefined && this.#bargeClearedAt !== undefined) {
      m.bargeInMs = Math.round(this.#bargeClearedAt - this.#bargeStartAt);
    }
    return m;
  }

  async #runAction(): Promise<void> {
    const action = this.#pendingAction;
    this.#pendingAction = undefined;
    if (!action) return;
    const { transport } = this.#d;
    if (action.kind === "end-call") {
      this.#log.info({ reason: action.reason }, "agent hangs up");
      await transport
        .hangUp(action.reason)
        .catch((err: Error) => this.#log.error({ err: err.message }, "hang-up failed"));
      this.end(`agent: ${action.reason}`);
      return;
    }
    this.#log.info({ target: action.target }, "transferring the call");
    try {
      await transport.transfer(action.target);
      this.#note(`transferred to ${action.target}`);
      this.end(`transferred to ${action.target}`);
    } catch (err) {
      this.#log.error({ err: (err as Error).message, target: action.target }, "transfer failed");
      this.#note(`transfer to ${action.target} failed: ${(err as Error).message}`);
      this.#history.addUser(
        `(system: the transfer to ${action.target} failed; tell the caller and offer help)`,
      );
      this.#startAgent(this.#history.messages(), { kind: "reply" }, false);
    }
  }

  // ---- faults, silence, DTMF --------------------------------------------------------

  async #prepareApology(): Promise<void> {
    let stream: TtsStream | undefined;
    try {
      stream = await this.#d.services.tts.open(this.#d.transport.output);
      stream.sendText(this.#d.config.apologyText);
      stream.flush();
      const chunks: AgentAudio[] = [];
      let open = 0;
      let seenSentence = false;
      for await (const ev of stream.events) {
        if (ev.type === "audio") chunks.push(ev.audio);
        if (ev.type === "sentence-start") {
          open += 1;
          seenSentence = true;
        }
        if (ev.type === "sentence-end") open -= 1;
        if (seenSentence && open === 0 && chunks.length) break;
      }
      this.#apology = concatAudio(chunks, this.#d.transport.output);
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, "could not pre-synthesize the apology");
    } finally {
      stream?.close();
    }
  }

  /** Something failed: say so (from cached audio, which works even when TTS is down) and keep listening. */
  #apologize(job: UserTurnJob | undefined, why: string): void {
    if (this.#job === job) this.#job = undefined;
    this.#log.warn({ why }, "apologizing to the caller");
    this.#note(`fault: ${why}`);
    if (this.#apology && audioMs(this.#apology, this.#d.transport.output) > 0) {
      this.#d.transport.play(this.#apology);
      this.#history.addAssistant(this.#d.config.apologyText);
      this.#record({
        type: "assistant",
        at: new Date().toISOString(),
        generated: this.#d.config.apologyText,
        heard: this.#d.config.apologyText,
        interrupted: false,
        toolCalls: [],
        metrics: {},
        error: why,
      });
    } else {
      this.#log.error("no apology audio available (TTS never worked on this call)");
    }
    this.#scheduleReprompt();
  }

  #scheduleReprompt(): void {
    const { clock, config } = this.#d;
    clock.clearTimeout(this.#repromptTimer);
    if (this.#ended || this.#userSpeaking || this.#agent?.speaking || this.#job) return;
    this.#repromptTimer = clock.setTimeout(() => {
      if (this.#userSpeaking || this.#agent?.speaking || this.#job) return;
      this.#reprompts += 1;
      if (this.#reprompts > config.maxReprompts) void this.#sayAndHangUp(config.goodbyeText, "caller silent");
      else this.#speakFixed(config.repromptText);
    }, config.repromptAfterMs);
  }

  async #sayAndHangUp(text: string, reason: string): Promise<void> {
    if (this.#ended) return;
    this.#log.info({ reason }, "saying goodbye");
    const turn = this.#startAgent(this.#history.messages(), { kind: "fixed" }, false, fixedReply(text));
    await turn.done;
    await this.#d.transport.hangUp(reason).catch(() => undefined);
    this.end(reason);
  }

  #onDtmf(digit: string): void {
    if (this.#ended) return;
    const { clock, config } = this.#d;
    this.#log.info({ digit }, "caller pressed a key");
    this.#dtmf += digit;
    clock.clearTimeout(this.#dtmfTimer);
    clock.clearTimeout(this.#repromptTimer);
    const send = () => {
      const digits = this.#dtmf;
      this.#dtmf = "";
      if (!digits) return;
      const job: UserTurnJob = {
        id: ++this.#jobSeq,
        speechEndAt: clock.now(),
        confirmed: true,
        source: "dtmf",
        text: `(the caller pressed on the keypad: ${digits.split("").join(" ")})`,
      };
      this.#dropJob();
      this.#job = job;
      this.#agent?.interrupt();
      const messages = [...this.#history.messages(), { role: "user" as const, content: job.text! }];
      job.turn = this.#startAgent(messages, { kind: "reply", job }, true);
      job.confirmedAt = clock.now();
      this.#onConfirmedJobReady(job);
    };
    if (digit === "#") send();
    else this.#dtmfTimer = clock.setTimeout(send, config.dtmfGapMs);
  }

  #note(text: string): void {
    this.#record({ type: "note", at: new Date().toISOString(), text });
  }

  #record(event: CallEvent): void {
    this.#d.transcripts.append(this.#d.transport.info.callId, event);
  }
}
