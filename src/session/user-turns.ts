// The caller's turns, from the end of their speech to the answer. Each is a job (user-turn.ts)
// that waits for the end of the turn (end-of-turn.ts) while its words are recognized, a reply
// asked for before the turn is sure and held until it is; then it is answered, apologized for or
// asked again (apology.ts), let go as a noise, or dropped when the caller goes on. Keypad digits
// are a turn of their own. The session (call-session.ts) routes the caller's speech here and
// owns the agent's turns.
import type { ChatMessage } from "../api/types/index.ts";
import type { Logger } from "../core/log.ts";
import type { CallEvent } from "../records/call-record.ts";
import type { AgentTurn } from "./agent-turn.ts";
import { GraceCommit } from "./answer-grace.ts";
import { type Apology, UNHEARD } from "./apology.ts";
import type { CallControl } from "./call-control.ts";
import type { SessionDeps } from "./call-session.ts";
import { TurnEndWait } from "./end-of-turn.ts";
import type { ConversationHistory } from "./history.ts";
import type { Interruptions } from "./interruptions.ts";
import type { Listeners } from "./listeners.ts";
import type { Opening } from "./opening.ts";
import { Recognition, type Utterance } from "./recognition.ts";
import { type SpeakerListener, VAD_RATE } from "./speaker-listener.ts";
import type { TurnCompletionModel } from "./turn-completion.ts";
import { answeredByAgent, digitsTurn, keptBeforeKeys, type UserTurnJob, userContent } from "./user-turn.ts";
import type { WaitingCue } from "./waiting-cue.ts";

/** What of the session the caller's turns use, as it is now (a handoff replaces its deps and history). */
export interface UserTurnsHost {
  deps(): SessionDeps;
  history(): ConversationHistory;
  ended(): boolean;
  /** The agent's turn being heard (or held to be released), and making `turn` it. */
  agent(): AgentTurn | undefined;
  setAgent(turn: AgentTurn | undefined): void;
  /** Starts the reply to `job` on `messages`, held until released when `held`. */
  reply(messages: readonly ChatMessage[], job: UserTurnJob, held: boolean): AgentTurn;
  record(event: CallEvent): void;
  note(text: string): void;
}

/** The session's parts the caller's turns work with. */
export interface UserTurnsParts {
  log: Logger;
  listeners: Listeners;
  talkOver: Interruptions<SpeakerListener>;
  apology: Apology<UserTurnJob>;
  control: CallControl;
  opening: Opening;
  cue: WaitingCue | undefined;
  completion: TurnCompletionModel | undefined;
}

export class UserTurns {
  readonly #host: UserTurnsHost;
  readonly #p: UserTurnsParts;
  readonly #log: Logger;
  /** The caller's turn in the works (none once answered, let go or dropped). */
  #current: UserTurnJob | undefined;
  #seq = 0;
  /** An answer heard commits its turn only after a grace the caller may go on in (answer-grace.ts). */
  readonly grace: GraceCommit;

  constructor(host: UserTurnsHost, parts: UserTurnsParts) {
    this.#host = host;
    this.#p = parts;
    this.#log = parts.log;
    const { clock, config } = host.deps();
    this.grace = new GraceCommit(clock, config.turn.resumeGraceMs, (job) => this.commit(job));
  }

  /** The caller's turn in the works, if any. */
  get current(): UserTurnJob | undefined {
    return this.#current;
  }

  /** `job`'s answer is over (heard, cut or failed): it is no longer in the works. */
  done(job: UserTurnJob | undefined): void {
    if (job && this.#current === job) this.#current = undefined;
  }

  /** A user turn from `l`'s utterance that ended at stream position `endMs`. */
  start(l: SpeakerListener, utterance: Utterance, endMs: number): void {
    const { clock, config } = this.#host.deps();
    const speechEndAt = l.clockAt(endMs);
    const job: UserTurnJob = {
      id: ++this.#seq,
      listener: l,
      speechEndAt,
      detectedAt: clock.now(),
      confirmed: false,
      source: "speech",
    };
    if (this.#p.opening.answers(l.clockAt(utterance.fromMs + config.turn.prerollMs), speechEndAt)) {
      this.#log.info({ job: job.id }, "said before the greeting was heard: the greeting answers it");
      job.yielded = true; // into the history once recognized, unanswered
      job.recognizing = this.#recognize(job, utterance);
      return;
    }
    this.#current?.wait?.cancel();
    if (this.#current && !this.#current.yielded) this.#current.recognition?.drop();
    this.#current = job;
    const inputs = {
      speechEndAt,
      prosody: config.turn.endOfTurnProsody ? l.endProsody(endMs) : undefined,
      pause: l.pauses.model(),
      onsetMaskMs: l.onsetMaskMs(),
      completion: this.#p.completion,
    };
    l.pauses.speechEnded(endMs, l.speechBefore(endMs));
    job.wait = new TurnEndWait(clock, config.turn, inputs, {
      speaking: () => this.#p.listeners.anyoneSpeaking(),
      onsetPending: () => this.#p.listeners.anyOnsetPending(),
      confirm: () => {
        if (this.#current === job) this.#confirm(job);
      },
      decided: (d) =>
        this.#log.debug({ job: job.id, endMs: Math.round(endMs), ...d }, "end-of-turn decision"),
    });
    job.recognizing = this.#recognize(job, utterance);
  }

  /** The utterance's transcript (see recognition.ts), then what the job does with it. */
  async #recognize(job: UserTurnJob, utterance: Utterance): Promise<void> {
    const { services, clock, config } = this.#host.deps();
    const t0 = clock.now();
    job.recognition = new Recognition(utterance);
    const { text, failed, dropped } = await job.recognition.run(
      services.asr,
      job.listener!.audio,
      VAD_RATE,
      clock,
      this.#log,
      config.deadlines.asrMs,
    );
    if (dropped) return;
    if (failed) job.failed = failed;
    if (this.#host.ended()) return;
    // The service's time: from the upload's end (ended early, at a pause, it comes before t0).
    const asked = utterance.upload?.endedAt ?? t0;
    job.asrMs = clock.now() - asked;
    job.askedAt = asked;
    job.recognizedAt = clock.now();
    job.text = text?.trim() ?? "";
    if (job.text) job.listener!.wordsHeard = true;
    if (job.yielded) {
      if (!job.failed) this.commit(job);
      return;
    }
    if (this.#current !== job) return;
    this.#log.debug({ text: job.text, asrMs: Math.round(job.asrMs) }, "recognized");
    if (this.#p.talkOver.heldBy(job.listener)) {
      // The words of an interruption: an acknowledgement (or none, in what was not their voice)
      // lets the agent go on; anything else stops it, and the reply to them is asked with what was
      // heard of it in the history.
      const held = await this.#p.talkOver.words(job.listener!, job.text, job.failed !== undefined);
      if (held === "resumed") {
        this.drop();
        return;
      }
      // Their voice, and no words made out in it: asked again, as after a failed recognition.
      if (held === "unheard") job.failed = UNHEARD;
      if (this.#host.ended() || this.#current !== job) return;
    }
    // Not yet confirmed, a failure waits for the end of the turn, weighed without words (end-of-turn.ts).
    if (job.failed && job.confirmed) {
      this.apologize(job, "speech recognition failed");
      return;
    }
    if (job.text && answeredByAgent(job, this.#host.deps().config.multiParty)) {
      const messages = [
        ...this.#host.history().messages(),
        { role: "user" as const, content: userContent(job) },
      ];
      job.turn = this.#host.reply(messages, job, !job.confirmed);
    }
    if (job.confirmed) this.#ready(job);
    else job.wait?.recognized(job.text, job.failed !== undefined);
  }

  #confirm(job: UserTurnJob): void {
    const { clock } = this.#host.deps();
    job.confirmed = true;
    this.#log.debug({ job: job.id, eouDelayMs: Math.round(clock.now() - job.speechEndAt) }, "end of turn");
    job.confirmedAt = clock.now();
    if (job.text !== undefined) this.#ready(job);
  }

  #ready(job: UserTurnJob): void {
    // No words in a voice at the caller's level is words not made out; in anything else, a noise.
    if (!job.failed && !job.text && job.listener?.spokeInUtterance()) job.failed = UNHEARD;
    if (job.failed) {
      this.apologize(job, "speech recognition failed");
      return;
    }
    if (!job.text) {
      this.#log.debug("no words recognized: ignoring the noise");
      this.#current = undefined;
      this.#p.control.scheduleReprompt();
      return;
    }
    const speaker = job.listener?.speaker?.name;
    this.#log.info({ text: job.text, ...(speaker ? { speaker } : {}) }, "caller said");
    if (!answeredByAgent(job, this.#host.deps().config.multiParty)) {
      this.#log.info({ speaker }, "not addressed to the agent: into the history only");
      this.commit(job);
      this.#current = undefined;
      return;
    }
    const agent = this.#host.agent();
    if (agent && agent !== job.turn) agent.interrupt();
    this.#host.setAgent(job.turn);
    if (job.turn) {
      // Until the reply is heard the caller may still go on (then the turns merge): only then is
      // the user turn part of the conversation.
      job.turn.onFirstPlay = () => this.grace.arm(job);
      if (!job.turn.released)
        this.#host.deps().onSpeculation?.({ used: true, chatRequests: job.turn.chatRequests });
      this.#p.apology.drop();
      job.turn.release();
      this.#p.cue?.arm(job.turn, job.speechEndAt);
    } else {
      this.commit(job);
    }
  }

  /** `job`'s words go into the conversation and the call's record, once (its answer was heard, or it needs none). */
  commit(job: UserTurnJob): void {
    this.grace.hold();
    if (job.committed || !job.text) return;
    job.committed = true;
    job.listener?.pauses.turnEnded();
    this.#host.history().addUser(userContent(job));
    const speaker = job.listener?.speaker?.name;
    this.#host.record({
      type: "user",
      at: new Date().toISOString(),
      text: job.text,
      source: job.source,
      ...(speaker ? { speaker } : {}),
    });
  }

  /** The turn in the works is given up: its wait, its recognition (unless yielded) and its held reply. */
  drop(): void {
    const turn = this.#current?.turn;
    // A reply asked for before the turn was sure, and never heard: speculation thrown away.
    if (turn && turn.timings.firstPlayAt === undefined && turn.chatRequests > 0)
      this.#host.deps().onSpeculation?.({ used: false, chatRequests: turn.chatRequests });
    this.#current?.wait?.cancel();
    if (!this.#current?.yielded) this.#current?.recognition?.drop();
    if (!this.#current?.committed) this.grace.hold();
    this.#current?.turn?.cancel();
    this.#current = undefined;
  }

  /**
   * The call ended: nothing commits, the turn in the works waits no more, and nobody will read
   * its transcript (no retry goes to the service after the call; uploads end with it). Its held
   * reply is the session's to drop, after the playing one is filed.
   */
  close(): void {
    this.grace.hold();
    this.#current?.wait?.cancel();
    this.#current?.recognition?.drop();
  }

  /** The job's words go into the history unanswered (now, or once recognized). */
  yield(job: UserTurnJob): void {
    this.#log.debug({ job: job.id }, "another speaker began: the last turn goes into the history unanswered");
    job.yielded = true;
    if (this.#p.talkOver.heldBy(job.listener)) void this.#p.talkOver.interrupt();
    if (this.#host.agent() === job.turn) this.#host.setAgent(undefined);
    this.drop();
    if (job.text !== undefined && !job.failed) this.commit(job);
  }

  /** Something failed, or no words were made out in the caller's voice: say so (apology.ts), keep listening. */
  apologize(job: UserTurnJob | undefined, why: string): void {
    if (this.#current === job) this.#current = undefined;
    const unheard = job?.failed === UNHEARD;
    if (!unheard) {
      this.#log.warn({ why }, "apologizing to the caller");
      this.#host.note(`fault: ${why}`);
    }
    // Said, it schedules the re-prompt once heard; not said, the caller is waited for now.
    if (!this.#p.apology.due(job, unheard ? UNHEARD : why)) this.#p.control.scheduleReprompt();
  }

  /** Keypad digits, gathered by call control: a confirmed turn of their own. */
  digits(digits: string): void {
    if (this.#host.ended()) return;
    const { clock } = this.#host.deps();
    const job = digitsTurn(++this.#seq, digits, clock.now());
    // Words said just before the keys ("my order number is…") stay in the conversation, before them.
    const words = keptBeforeKeys(this.#current);
    this.drop();
    this.#current = job;
    this.#host.agent()?.interrupt();
    const answer = () => {
      if (this.#current !== job || this.#host.ended()) return;
      const messages = [...this.#host.history().messages(), { role: "user" as const, content: job.text! }];
      job.turn = this.#host.reply(messages, job, true);
      job.confirmedAt = clock.now();
      this.#ready(job);
    };
    if (words?.text === undefined && words?.recognizing) void words.recognizing.then(answer);
    else {
      if (words) this.commit(words);
      answer();
    }
  }
}
