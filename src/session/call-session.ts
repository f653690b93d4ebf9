// The per-call actor. It listens (VAD → end of turn), thinks (ASR → chat) and speaks
// (TTS → transport), starting the work preemptively on a short silence but letting audio
// out only once the caller's turn is confirmed, and yields at once when the caller talks
// over it. Every timer goes through the injected clock; every event arrives on one
// thread, so state changes need no locks, only stale-result checks. The caller's turns,
// from the end of their speech to the answer, are user-turns.ts's; the agent's are here.
import type { ChatMessage } from "../api/types/index.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { CallEvent, CallEventSink, TurnMetrics } from "../records/call-record.ts";
import type { CallEnd } from "../records/outcome.ts";
import { AgentTurn, type AgentTurnResult, fixedReply } from "./agent-turn.ts";
import { answerInGrace } from "./answer-grace.ts";
import { Apology } from "./apology.ts";
import { CachedSpeech } from "./cached-speech.ts";
import { type CallAction, CallControl } from "./call-control.ts";
import { type CallTrace, reportTurn, tracedTools, traceTurn } from "./call-trace.ts";
import type { SessionConfig } from "./config.ts";
import { EARLY_ANSWER_DROPPED, EarlyAnswerPause } from "./early-answer-pause.ts";
import { type AgentResolver, currentRecognizer, handOver } from "./handoff.ts";
import { ConversationHistory } from "./history.ts";
import { Interruptions } from "./interruptions.ts";
import type { LineLevel } from "./line-level.ts";
import { Listeners } from "./listeners.ts";
import { OnsetPause } from "./onset-pause.ts";
import { Opening } from "./opening.ts";
import type { ChatModel, SessionServices, TtsStream } from "./services.ts";
import { SpeakerListener } from "./speaker-listener.ts";
import type { SpeechDetectorFactory } from "./speech-detector.ts";
import { type ToolBox, toolBoxOf } from "./tools.ts";
import type { CallTransport, DialPerson, Speaker } from "./transport.ts";
import { TtsPool } from "./tts-pool.ts";
import { turnCompletionFor } from "./turn-completion.ts";
import { turnMetrics } from "./turn-metrics.ts";
import { assistantEvent, callStartEvent, logAgentTurn } from "./turn-report.ts";
import type { UserTurnJob } from "./user-turn.ts";
import { UserTurns } from "./user-turns.ts";
import { type WaitingCue, waitingCueOf } from "./waiting-cue.ts";

export interface SessionDeps {
  transport: CallTransport;
  services: SessionServices;
  createSpeechDetector: SpeechDetectorFactory;
  clock: Clock;
  config: SessionConfig;
  log: Logger;
  transcripts: CallEventSink;
  /** Per-turn figures, e.g. for Prometheus. */
  onTurnMetrics?: (m: TurnMetrics) => void;
  /**
   * A reply started before the caller's turn was confirmed was used (released at the
   * confirmation) or thrown away (the caller went on): how much speculation costs.
   */
  onSpeculation?: (s: { used: boolean; chatRequests: number }) => void;
  /** Traces the call's turns (app/tracing/), when tracing is on. */
  trace?: CallTrace;
  /** The call ended: how (the outcome counted and filtered on) and why, in words. */
  onEnd?: (end: CallEnd) => void;
  /** The usual caller level of the line the call came in on, learned across its calls (line-level.ts). */
  line?: LineLevel;
  /** Places a warm transfer's call to the person (warm-transfer.ts); without it, transfers are blind. */
  dialPerson?: DialPerson;
  /** The agents this call may be handed to, resolved for it (handoff.ts). */
  handoff?: AgentResolver;
}

/** What an agent turn is: a reply (to `job`, if it answers one), fixed words, or the apology for `why`. */
type TurnMeta = { kind: "reply" | "fixed" | "apology"; job?: UserTurnJob; why?: string };

export class CallSession {
  #d: SessionDeps;
  readonly #log: Logger;
  #history: ConversationHistory;
  #tools: ToolBox;
  #tts: TtsPool;
  readonly #control: CallControl;
  readonly #startedAt: number;
  #ended = false;
  /** The transport reported the call's end while we were hanging up or transferring. */
  #farEnd: CallEnd | undefined;

  // Listening: one listener for a call, one per member on a multi-party transport.
  readonly #listeners: Listeners;
  /** The caller's turns, from the end of their speech to the answer. */
  readonly #turns: UserTurns;
  /** Aborted when the call ends: whatever is still uploading stops. */
  readonly #callAbort = new AbortController();

  // Agent side.
  #agent: AgentTurn | undefined;
  /** Talk over the agent: barge-ins, and an interruption held for its words. */
  readonly #talkOver: Interruptions<SpeakerListener>;
  /** The caller going on right after an early answer began (early-answer-pause.ts). */
  readonly #answerPause: EarlyAnswerPause<SpeakerListener>;
  /** An early answer paused because the VAD heard a possible onset (see #watchOnset). */
  readonly #onset: OnsetPause;
  readonly #apology: Apology<UserTurnJob>;
  readonly #opening = new Opening();
  readonly #cue: { speech: CachedSpeech; cue: WaitingCue } | undefined;

  constructor(deps: SessionDeps) {
    this.#d = deps;
    const { transport, config } = deps;
    this.#log = deps.log.child({ callId: transport.info.callId });
    this.#history = new ConversationHistory(config.systemPrompt, config.history);
    this.#tools = toolBoxOf(config, transport, this.#log);
    this.#tts = new TtsPool(deps.services.tts, transport.output, this.#log);
    this.#control = new CallControl({
      ...deps,
      log: this.#log,
      host: {
        busy: () =>
          this.#listeners.anyoneSpeaking() ||
          !!this.#agent?.speaking ||
          !!this.#turns.current ||
          this.#apology.pending,
        speakFixed: (text) => this.#speakFixed(text),
        end: (end) => this.end(end),
        note: (text) => this.#note(text),
        record: (event) => this.#record(event),
        history: () => this.#history.messages(),
        transferFailed: (target, why) => {
          if (this.#farEnd !== undefined) {
            this.end(this.#farEnd); // the caller went while the transfer was tried
            return;
          }
          this.#history.addUser(`(system: the call to ${target} failed: ${why}; tell the caller and help)`);
          this.#startAgent(this.#history.messages(), { kind: "reply" }, false);
        },
        digits: (digits) => this.#turns.digits(digits),
        handoff: (to, reason) => this.#handOff(to, reason),
      },
    });
    this.#talkOver = new Interruptions(deps.clock, {
      agent: () => this.#agent,
      log: this.#log,
      record: (outcome) => this.#record({ type: "barge-in", at: new Date().toISOString(), outcome }),
      resumed: () => this.#control.scheduleReprompt(),
    });
    this.#apology = new Apology(new CachedSpeech(config.apologyText, transport.output), {
      format: transport.output,
      clock: deps.clock,
      log: this.#log,
      askAgainText: () => this.#d.config.askAgainText,
      host: {
        quiet: () => this.idle && !this.#listeners.anyOnsetPending(),
        say: (text, openTts, why) =>
          this.#startAgent(
            this.#history.messages(),
            { kind: "apology", why },
            false,
            fixedReply(text),
            openTts,
          ),
      },
    });
    this.#cue = waitingCueOf(config.waitingCue, deps.clock, transport, {
      busy: () => this.#listeners.anyoneSpeaking() || this.#listeners.anyOnsetPending(),
      played: (text: string) => this.#note(`waiting cue played: ${text}`),
    });
    this.#answerPause = new EarlyAnswerPause(deps.clock, this.#log, () => this.#agent);
    this.#onset = new OnsetPause(
      {
        earlyAnswer: (l) =>
          answerInGrace(this.#turns.current, this.#agent, l, deps.clock.now(), config.turn, "onset"),
        current: () => this.#agent,
      },
      this.#log,
    );
    this.#listeners = new Listeners(
      (speaker) => this.#newListener(speaker),
      (speaker) =>
        this.#log.info({ speaker: speaker.name, speakerId: speaker.id }, "listening to a new speaker"),
    );
    this.#startedAt = deps.clock.now();
    this.#turns = new UserTurns(
      {
        deps: () => this.#d,
        history: () => this.#history,
        ended: () => this.#ended,
        agent: () => this.#agent,
        setAgent: (turn) => {
          this.#agent = turn;
        },
        reply: (messages, job, held) => this.#startAgent(messages, { kind: "reply", job }, held),
        record: (event) => this.#record(event),
        note: (text) => this.#note(text),
      },
      {
        log: this.#log,
        listeners: this.#listeners,
        talkOver: this.#talkOver,
        apology: this.#apology,
        control: this.#control,
        opening: this.#opening,
        cue: this.#cue?.cue,
        completion: turnCompletionFor(config.turn, deps.services.turnCompletion, this.#log),
      },
    );
  }

  get history(): ConversationHistory {
    return this.#history;
  }

  get callId(): string {
    return this.#d.transport.info.callId;
  }

  /** Presses keys on the call now (the TypeScript API's hooks); rejects saying why it cannot. */
  sendDtmf(digits: string): Promise<void> {
    return this.#control.pressChecked(digits);
  }

  /** Nobody is speaking and no turn is in the works. */
  get idle(): boolean {
    return !this.#listeners.anyoneSpeaking() && !this.#turns.current && !this.#agent;
  }

  /** Attaches to the transport, greets the caller and starts listening. */
  start(): void {
    const { transport, config } = this.#d;
    const info = transport.info;
    this.#record(callStartEvent(info, config.agentName));
    this.#log.info({ from: info.from, to: info.to, transport: info.transport }, "call started");
    transport.attach({
      // A caller on hold (a warm transfer) is heard by nobody.
      audio: (frame, speaker) =>
        this.#control.callerAudio(frame) || this.#ended || this.#listeners.push(frame, speaker),
      speakerLeft: (id) => this.#onSpeakerLeft(id),
      dtmf: (digit) => {
        if (!this.#ended) this.#control.digit(digit);
      },
      played: () => this.#agent?.checkDrained(),
      ended: (reason) => {
        // The transport ends a call only when the far end went; while we hang up or transfer, the
        // end is ours and named when the request returns.
        const end: CallEnd = this.#control.callerLeft(reason);
        if (this.#control.acting) this.#farEnd ??= end;
        else this.end(end);
      },
    });
    this.#control.start();
    this.#tts.warm();
    void this.#apology.speech.prepare(this.#d.services.tts, this.#log);
    void this.#cue?.speech.prepare(this.#d.services.tts, this.#log);
    // A phone menu speaks first (outbound/ivr.ts): the agent listens, and answers what it hears.
    if (config.listenFirst) this.#control.scheduleReprompt();
    else this.#greet(config.greeting);
  }

  /** The agent's first words: `line`, else the model's, to the conversation it has. */
  #greet(line: string | undefined): void {
    this.#opening.greets(
      line ? this.#speakFixed(line) : this.#startAgent(this.#history.messages(), { kind: "reply" }, false),
    );
  }

  /** Hands the call to `to` once the words being spoken are heard (the TypeScript API's hooks). */
  handOff(to: string, reason: string): void {
    this.#whenHeard(() => this.#handOff(to, reason));
  }

  /** Transfers the call once the words being spoken are heard (the TypeScript API's hooks). */
  transfer(action: Extract<CallAction, { kind: "transfer" }>): void {
    if (this.#ended) throw new Error(`call ${this.callId} is over`);
    this.#whenHeard(() => void this.#control.run(action));
  }

  #whenHeard(act: () => void): void {
    void (this.#agent?.done ?? Promise.resolve()).then(() => this.#ended || act());
  }

  /** Another agent takes the call over (handoff.ts): its settings, services, tools and voice. */
  #handOff(to: string, reason: string): void {
    const parts = { deps: this.#d, history: this.#history, tools: this.#tools, tts: this.#tts };
    const next = handOver(parts, to, reason, { log: this.#log, apology: this.#apology });
    if (typeof next === "string") {
      this.#history.addUser(`(system: ${next}; tell the caller and offer help)`);
      return void this.#startAgent(this.#history.messages(), { kind: "reply" }, false);
    }
    ({ deps: this.#d, history: this.#history, tools: this.#tools, tts: this.#tts } = next);
    this.#control.agentChanged(next.deps.config, next.deps.services);
    this.#greet(next.deps.config.handoffLine ?? next.deps.config.greeting);
  }

  /** Ends the session (caller hung up, or we did, or the bridge is shutting down). Idempotent. */
  end(end: CallEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    const { clock } = this.#d;
    this.#turns.close();
    this.#answerPause.stop();
    this.#cue?.cue.cancel();
    this.#apology.drop();
    this.#talkOver.barges.endAll();
    this.#control.close();
    // The playing reply is interrupted (and filed with what was heard) before any held one is dropped.
    this.#agent?.interrupt();
    this.#turns.current?.turn?.cancel();
    this.#callAbort.abort();
    const levels = this.#listeners.closeAll();
    this.#tts.close();
    const durationMs = Math.round(clock.now() - this.#startedAt);
    const { outcome, reason } = end;
    this.#record({ type: "call-end", at: new Date().toISOString(), reason, outcome, durationMs, levels });
    this.#log.info({ reason, outcome, durationMs }, "call ended");
    this.#d.onEnd?.(end);
  }

  // ---- caller audio and turn-taking -------------------------------------------------

  #newListener(speaker: Speaker | undefined): SpeakerListener {
    return new SpeakerListener({
      speaker,
      inputRate: this.#d.transport.inputRate,
      createSpeechDetector: this.#d.createSpeechDetector,
      asr: currentRecognizer(() => this.#d.services),
      clock: this.#d.clock,
      signal: this.#callAbort.signal,
      turn: this.#d.config.turn,
      line: this.#d.line,
      agentSpeaking: () => !!this.#agent?.speaking,
      events: {
        speechStart: (l, atMs) => this.#onSpeechStart(l, atMs),
        speechEnd: (l, atMs) => this.#onSpeechEnd(l, atMs),
        quietFrame: (l, frameMs) => this.#onset.watch(l, frameMs),
      },
    });
  }

  /** A member left: their half-said words are dropped, and they no longer hold the agent back. */
  #onSpeakerLeft(id: string): void {
    const l = this.#listeners.member(id);
    if (!l || this.#ended) return;
    this.#listeners.remove(id);
    this.#log.info({ speaker: l.speaker?.name, speakerId: id }, "speaker left");
    const job = this.#turns.current;
    if (job?.listener === l && !job.confirmed) this.#turns.drop();
    this.#earlyAnswerGoesOn(l);
    this.#onset.release(l);
    this.#talkOver.left(l);
    l.close();
  }

  #onSpeechStart(l: SpeakerListener, atMs: number): void {
    if (this.#ended) return;
    const { clock, config } = this.#d;
    this.#log.debug({ atMs: Math.round(atMs), speaker: l.speaker?.name }, "speech-start");
    this.#cue?.cue.callerSpoke();
    // The onset became speech: what follows decides, as if it had been heard at once.
    this.#onset.forget(l);
    this.#control.callerSpoke();
    l.speechStartAt = l.clockAt(atMs);
    const agent = this.#agent;
    const early = answerInGrace(this.#turns.current, agent, l, l.speechStartAt, config.turn);
    if (early) {
      // The caller goes on right after the agent began to answer: the pause was not the end of the
      // turn. Until that is sure the turn is not committed, or it would be in the history twice.
      this.#turns.grace.hold();
      this.#answerPause.begin(early, l, config.turn.bargeInMinMs - (clock.now() - l.speechStartAt), () => {
        this.#note(EARLY_ANSWER_DROPPED);
        if (this.#agent === early) this.#agent = undefined;
        this.#turns.drop();
        l.pauses.resumed(atMs);
      });
      return;
    }
    if (agent?.speaking && agent.timings.firstPlayAt !== undefined && !this.#talkOver.holds(agent)) {
      // Talking over the agent: pause soon, interrupt if it goes on, else resume. Going on after
      // a short gap continues the same barge-in, and the same utterance.
      const { bargeInMinMs, bargeInConfirmMs } = config.turn;
      // Nothing of it is sounding (its next audio is on its way): that audio must not start over them.
      if (agent.waitingForAudio) agent.pause();
      if (this.#talkOver.barges.start(l, l.speechStartAt, bargeInMinMs, bargeInConfirmMs))
        l.beginUtterance(atMs - config.turn.prerollMs, true);
      return;
    }
    const job = this.#turns.current;
    if (job && job.source === "speech" && job.listener !== l) {
      // Someone else speaks before the last speaker was answered: those words go into the
      // history as they are, and the agent answers whoever finishes last.
      this.#turns.yield(job);
    } else if (job && !job.confirmed) {
      // The caller went on after a pause: the preemptive work was premature.
      this.#log.debug({ job: job.id }, "caller resumed: dropping preemptive turn");
      this.#turns.drop();
      l.pauses.resumed(atMs);
      return; // keep the utterance start: the pause was mid-sentence
    } else if (job?.confirmed && agent && agent === job.turn && agent.timings.firstPlayAt === undefined) {
      // Confirmed but not yet heard: still just a pause to the caller. Merge.
      this.#log.debug("caller resumed before the agent spoke: merging utterances");
      agent.cancel();
      this.#agent = undefined;
      this.#turns.drop();
      l.pauses.resumed(atMs);
      return;
    }
    l.beginUtterance(atMs - config.turn.prerollMs, false);
  }

  #onSpeechEnd(l: SpeakerListener, atMs: number): void {
    if (this.#ended) return;
    this.#log.debug({ atMs: Math.round(atMs), speaker: l.speaker?.name }, "speech-end");
    const upload = l.takeUpload();
    if (this.#earlyAnswerGoesOn(l)) {
      upload?.abort(); // too short to be words (a click, a breath)
      return;
    }
    // Speech over the agent that ends short was a backchannel or a cough: the agent goes on
    // (unless someone else holds it). Longer, it interrupted the agent, and is a user turn now,
    // whose words decide whether the agent stops (interruptions.ts).
    const resumed = () => {
      if (!this.#ended) this.#talkOver.resumeShort();
    };
    if (this.#talkOver.barges.stop(l, this.#d.config.turn.bargeInGapMs, resumed)) {
      upload?.abort();
      return;
    }
    this.#turns.start(l, l.utterance(atMs + 60, upload), atMs);
  }

  /**
   * `l`'s sound that paused the early answer to their turn ended short, or they left: the answer
   * goes on, and the turn commits once the grace is over. True if it had paused one.
   */
  #earlyAnswerGoesOn(l: SpeakerListener): boolean {
    if (!this.#answerPause.ended(l)) return false;
    const job = this.#turns.current;
    if (job) this.#turns.grace.arm(job);
    return true;
  }

  // ---- agent turns ------------------------------------------------------------------

  #startAgent(
    messages: readonly ChatMessage[],
    meta: TurnMeta,
    held: boolean,
    chat: ChatModel = this.#d.services.chat,
    openTts: () => Promise<TtsStream> = () => this.#tts.take(),
  ): AgentTurn {
    const { transport, clock, config } = this.#d;
    const traced = traceTurn(this.#d.trace, clock.now(), meta, held);
    const turn = new AgentTurn(
      {
        chat: traced?.chat(chat) ?? chat,
        openTts,
        tools: traced ? tracedTools(this.#tools, traced, clock) : this.#tools,
        transport,
        clock,
        ttsFirstAudioMs: config.deadlines.ttsFirstAudioMs,
        log: this.#log,
      },
      messages,
      { held },
    );
    if (!held) {
      this.#agent?.interrupt();
      this.#agent = turn;
      if (!meta.job) this.#talkOver.underWay(turn, () => this.#listeners.speaking(), config.turn);
    }
    this.#control.cancelReprompt();
    void turn.start().then((r) => {
      if (traced) reportTurn(traced, turn, meta.job, r, clock.now(), this.#talkOver.interruptedBy);
      this.#onAgentDone(turn, meta, r);
    });
    return turn;
  }

  #speakFixed(text: string): AgentTurn {
    return this.#startAgent(this.#history.messages(), { kind: "fixed" }, false, fixedReply(text));
  }

  #onAgentDone(turn: AgentTurn, meta: TurnMeta, r: AgentTurnResult): void {
    this.#talkOver.agentDone(turn);
    if (r.cancelled) return;
    if (meta.job) this.#turns.commit(meta.job);
    this.#history.addReply(r.messages);
    // The apology is filed with the fault it answers, and no figures.
    const metrics = meta.why ? {} : turnMetrics(turn, meta.job, r, this.#talkOver.interruptedBy);
    this.#record(assistantEvent(meta.why ? { ...r, error: meta.why } : r, metrics));
    logAgentTurn(this.#log, r, metrics, turn.dryRuns);
    if (meta.kind === "reply") this.#d.onTurnMetrics?.(metrics);
    if (this.#agent === turn) this.#agent = undefined;
    this.#turns.done(meta.job);
    if (r.interrupted) this.#talkOver.interruptionOver();
    if (this.#ended) return;
    if (r.error && !meta.why) {
      this.#turns.apologize(meta.job, r.error);
      return;
    }
    if (r.action) {
      void this.#control.run(r.action);
      return;
    }
    if (!r.interrupted) this.#control.scheduleReprompt();
  }

  #note(text: string): void {
    this.#record({ type: "note", at: new Date().toISOString(), text });
  }

  #record(event: CallEvent): void {
    this.#d.transcripts.append(this.#d.transport.info.callId, event);
  }
}
