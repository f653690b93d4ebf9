// Call control for one session: what happens to the call as a whole rather than to a turn.
// The model's hang-up, transfer and handoff requests, re-prompts of a silent caller and the goodbye
// after too many, the call's time limit, and keypad digits gathered into one message.
// The session owns the conversation; this asks it for what it needs through `ControlHost`.

import type { ChatMessage } from "../api/types/index.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { CallEvent } from "../records/call-record.ts";
import type { CallEnd } from "../records/outcome.ts";
import type { AgentTurn, AgentTurnResult } from "./agent-turn.ts";
import type { SessionConfig } from "./config.ts";
import { checkDigits, sendDigits } from "./dtmf-out.ts";
import { PersonEar } from "./person-answer.ts";
import type { SessionServices } from "./services.ts";
import type { SpeechDetectorFactory } from "./speech-detector.ts";
import { transferBrief } from "./transfer-brief.ts";
import type { CallTransport, DialPerson } from "./transport.ts";
import { type WarmOutcome, WarmTransfer, type WarmTransferDeps } from "./warm-transfer.ts";

export type CallAction = NonNullable<AgentTurnResult["action"]>;

export interface ControlHost {
  /** Someone is speaking, the agent is speaking, or a turn is in the works. */
  busy(): boolean;
  /** Speaks fixed words through the same path as replies (not preemptively). */
  speakFixed(text: string): AgentTurn;
  end(end: CallEnd): void;
  note(text: string): void;
  /** Appends an event to the call's record (a warm transfer's outcome and the person's leg). */
  record(event: CallEvent): void;
  /** The transfer failed: the model should tell the caller (a system line, then a reply). */
  transferFailed(target: string, why: string): void;
  /** Keypad digits, gathered, as one caller message. */
  digits(digits: string): void;
  /** The conversation so far (a warm transfer's brief summarizes it). */
  history(): readonly ChatMessage[];
  /** Another agent takes the call over (handoff.ts). */
  handoff(agent: string, reason: string): void;
}

export class CallControl {
  readonly #host: ControlHost;
  readonly #transport: CallTransport;
  readonly #clock: Clock;
  #config: SessionConfig;
  readonly #log: Logger;
  #repromptTimer: TimerHandle | undefined;
  #reprompts = 0;
  #maxTimer: TimerHandle | undefined;
  #dtmf = "";
  #dtmfTimer: TimerHandle | undefined;
  #closed = false;
  #acting = false;
  #services: SessionServices | undefined;
  readonly #dialPerson: DialPerson | undefined;
  readonly #createDetector: SpeechDetectorFactory | undefined;
  /** A warm transfer under way, or joined (then the agent has left the call). */
  #warm: { flow: WarmTransfer; target: string; who?: string } | undefined;

  constructor(opts: {
    host: ControlHost;
    transport: CallTransport;
    clock: Clock;
    config: SessionConfig;
    log: Logger;
    /** A warm transfer's brief and its words to the person (without them, every transfer is blind). */
    services?: SessionServices;
    dialPerson?: DialPerson | undefined;
    /** Hears the person's spoken yes or no after a warm transfer's brief (else the keypad alone). */
    createSpeechDetector?: SpeechDetectorFactory;
  }) {
    this.#createDetector = opts.createSpeechDetector;
    this.#services = opts.services;
    this.#dialPerson = opts.dialPerson;
    this.#host = opts.host;
    this.#transport = opts.transport;
    this.#clock = opts.clock;
    this.#config = opts.config;
    this.#log = opts.log;
  }

  /**
   * True while we hang up or transfer: the transport may report the end of the call it was asked
   * to end before the request returns, and the session should name the end for what it asked.
   */
  get acting(): boolean {
    return this.#acting;
  }

  /**
   * The call was handed to another agent: its re-prompts, goodbye and warm transfers (hold, brief,
   * voice, summary) from now on; the time limit stays the call's.
   */
  agentChanged(config: SessionConfig, services: SessionServices): void {
    this.#config = config;
    this.#services = services;
  }

  /** Starts the call's time limit. */
  start(): void {
    this.#maxTimer = this.#clock.setTimeout(
      () =>
        void this.sayAndHangUp(this.#config.goodbyeText, {
          outcome: "max_call_duration",
          reason: "max call duration",
        }),
      this.#config.maxCallMs,
    );
  }

  close(): void {
    this.#closed = true;
    for (const t of [this.#repromptTimer, this.#maxTimer, this.#dtmfTimer]) this.#clock.clearTimeout(t);
    // Recorded now, before the call's end: a transfer cut short by it is in the record and counted.
    const w = this.#warm;
    const cut = w?.flow.close("the call ended");
    if (w && cut) this.#recordWarm(w.target, cut);
    if (w && cut?.kind === "joined") this.#host.note(takenNote(w.target, cut.who));
  }

  /**
   * A frame from the caller, taken while a warm transfer holds the caller (dropped) or has joined
   * them to the person (relayed); false when the agent listens as usual.
   */
  callerAudio(frame: Int16Array): boolean {
    return this.#warm?.flow.callerAudio(frame) ?? false;
  }

  /** How the call ends when the caller hangs up: after a warm transfer joined, it ends transferred. */
  callerLeft(reason: string): CallEnd {
    const w = this.#warm;
    // Accepted: the caller's media may end because the carrier is joining the calls (warm-transfer.ts).
    const who = w?.who ?? w?.flow.takenBy;
    if (!w || who === undefined) return { outcome: "caller_hangup", reason };
    return { outcome: "transferred", reason: `warm transfer to ${w.target} (taken by ${who}): ${reason}` };
  }

  /** The caller spoke: no re-prompt is due, and the count starts again. */
  callerSpoke(): void {
    this.cancelReprompt();
    this.#reprompts = 0;
  }

  cancelReprompt(): void {
    this.#clock.clearTimeout(this.#repromptTimer);
  }

  /** After the agent's turn: if the caller stays silent, ask whether they are still there. */
  scheduleReprompt(): void {
    this.cancelReprompt();
    // A group conversation is not a call to keep alive: silence there is nobody's fault.
    if (this.#closed || this.#config.multiParty || this.#host.busy() || this.#warm) return;
    this.#repromptTimer = this.#clock.setTimeout(() => {
      if (this.#host.busy()) return;
      this.#reprompts += 1;
      if (this.#reprompts > this.#config.maxReprompts)
        void this.sayAndHangUp(this.#config.goodbyeText, {
          outcome: "caller_silent",
          reason: "caller silent",
        });
      else this.#host.speakFixed(this.#config.repromptText);
    }, this.#config.repromptAfterMs);
  }

  async sayAndHangUp(text: string, end: CallEnd): Promise<void> {
    if (this.#closed) return;
    this.#log.info({ reason: end.reason }, "saying goodbye");
    await this.#host.speakFixed(text).done;
    await this.#act(() => this.#transport.hangUp(end.reason)).catch(() => undefined);
    this.#host.end(end);
  }

  /** Runs what the model asked for once its words were heard: hang up, or transfer. */
  async run(action: CallAction): Promise<void> {
    if (action.kind === "dtmf") return this.#pressKeys(action.digits);
    if (action.kind === "handoff") {
      this.#log.info({ to: action.agent, reason: action.reason }, "handing the call to another agent");
      this.#host.handoff(action.agent, action.reason);
      return;
    }
    if (action.kind === "end-call") {
      this.#log.info({ reason: action.reason }, "agent hangs up");
      await this.#act(() => this.#transport.hangUp(action.reason)).catch((err: Error) =>
        this.#log.error({ err: err.message }, "hang-up failed"),
      );
      this.#host.end({ outcome: "agent_hangup", reason: `agent: ${action.reason}` });
      return;
    }
    const mode = action.mode ?? this.#config.transferMode ?? "blind";
    if (mode === "warm" && this.#dialPerson && this.#services)
      return this.#warmTransfer(action.target, action.brief, this.#dialPerson, this.#services);
    if (mode === "warm") this.#log.warn("a warm transfer cannot be placed on this call: transferring blind");
    this.#log.info({ target: action.target }, "transferring the call");
    try {
      await this.#act(() => this.#transport.transfer(action.target));
      this.#host.note(`transferred to ${action.target}`);
      this.#host.end({ outcome: "transferred", reason: `transferred to ${action.target}` });
    } catch (err) {
      const why = (err as Error).message;
      this.#log.error({ err: why, target: action.target }, "transfer failed");
      this.#host.note(`transfer to ${action.target} failed: ${why}`);
      this.#host.transferFailed(action.target, why);
    }
  }

  /** Holds the caller, calls and briefs the person; joined, the agent leaves; else it takes the call back. */
  async #warmTransfer(
    target: string,
    brief: string | undefined,
    dial: DialPerson,
    services: SessionServices,
  ): Promise<void> {
    const config = this.#config.warmTransfer ?? { answerMs: 25_000 };
    const log = this.#log.child({ transfer: "warm", target });
    log.info("warm transfer: holding the caller and calling the person");
    this.#host.note(`warm transfer to ${target}: calling`);
    this.cancelReprompt();
    const flow = new WarmTransfer({
      caller: this.#transport,
      dial,
      tts: services.tts,
      clock: this.#clock,
      log,
      config,
      sayToCaller: async (text) => {
        await this.#host.speakFixed(text).done;
      },
      brief: (signal) => {
        const history = this.#host.history();
        return transferBrief({ fixed: brief ?? config.brief, history, chat: services.chat, signal, log });
      },
      ...(this.#createDetector ? { ear: this.#earOf(this.#createDetector, services, log) } : {}),
      personLeft: () => {
        const reason = `warm transfer to ${target} (taken by ${warm.who}): the person hung up`;
        void this.#transport.hangUp("the person hung up").catch(() => undefined);
        this.#host.end({ outcome: "transferred", reason });
      },
    });
    const warm: { flow: WarmTransfer; target: string; who?: string } = { flow, target };
    this.#warm = warm;
    const out = await flow.run(target);
    if (this.#closed) return; // close() recorded how it ended
    this.#recordWarm(target, out);
    if (out.kind === "joined") {
      warm.who = out.who;
      // The agent has left: the call is the caller's and the person's now, however long it lasts.
      this.#clock.clearTimeout(this.#maxTimer);
      this.#host.note(takenNote(target, out.who));
      return;
    }
    this.#warm = undefined;
    this.#host.note(`warm transfer to ${target} failed (${out.outcome}): ${out.why}`);
    this.#host.transferFailed(target, out.why);
  }

  /** A warm transfer's outcome in the call's record, with the person's leg when someone answered. */
  #recordWarm(target: string, out: WarmOutcome): void {
    this.#host.record({
      type: "warm-transfer",
      at: new Date().toISOString(),
      target,
      outcome: out.kind === "joined" ? "joined" : out.outcome,
      ...(out.kind === "failed" ? { why: out.why } : {}),
      ...(out.leg ? { leg: out.leg } : {}),
    });
  }

  /** The person's ear: the agent's recognizer (the one having the call) on the session's detector. */
  #earOf(
    createDetector: SpeechDetectorFactory,
    services: SessionServices,
    log: Logger,
  ): NonNullable<WarmTransferDeps["ear"]> {
    return (rate, answered) =>
      new PersonEar({ rate, recognizer: services.asr, createDetector, log, answered });
  }

  /** Sends keypad digits as given (the TypeScript API's hooks): checked first, a bad key refused. */
  pressChecked(digits: string): Promise<void> {
    const keys = checkDigits(digits);
    if ("error" in keys) return Promise.reject(new TypeError(`sendDtmf: ${keys.error}`));
    return this.sendDtmf(keys.digits);
  }

  /** Sends keypad digits (checked: dtmf-out.ts) now; rejects when the call cannot carry them. */
  async sendDtmf(digits: string): Promise<void> {
    if (this.#closed) throw new Error("the call has ended");
    this.#log.info({ digits }, "pressing keys");
    await sendDigits(this.#transport, this.#clock, digits);
    this.#host.note(`agent pressed ${digits}`);
  }

  /** The model's keys (send_dtmf), after its words: the call goes on, listening for what answers. */
  async #pressKeys(digits: string): Promise<void> {
    try {
      await this.sendDtmf(digits);
    } catch (err) {
      const why = (err as Error).message;
      this.#log.warn({ err: why, digits }, "keys not sent");
      if (!this.#closed) this.#host.note(`keys ${digits} not sent: ${why}`);
    }
    this.scheduleReprompt();
  }

  async #act(request: () => Promise<void>): Promise<void> {
    this.#acting = true;
    try {
      await request();
    } finally {
      this.#acting = false;
    }
  }

  /** A keypad digit: sent to the model after a pause (`dtmfGapMs`), or at once on '#'. */
  digit(digit: string): void {
    if (this.#warm) return; // on hold, or talking to the person: not for the agent
    this.#log.info({ digit }, "caller pressed a key");
    this.#dtmf += digit;
    this.#clock.clearTimeout(this.#dtmfTimer);
    this.cancelReprompt();
    const send = () => {
      const digits = this.#dtmf;
      this.#dtmf = "";
      if (digits) this.#host.digits(digits);
    };
    if (digit === "#") send();
    else this.#dtmfTimer = this.#clock.setTimeout(send, this.#config.dtmfGapMs);
  }
}

function takenNote(target: string, who: string): string {
  return `warm transfer to ${target}: taken by ${who}; caller and person joined`;
}
