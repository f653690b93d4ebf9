// Warm transfer (#56): the caller is held while the bridge calls the person, the person is briefed
// and asked to take the call (a spoken yes or keypad 1; no or 2 declines: person-answer.ts), and
// only then are the two joined — by the carrier where it can (PersonLeg.join: a Twilio conference;
// the bridge then leaves the call), else the bridge relays each one's audio to the other. Busy, no answer,
// a machine, a decline, a hang-up or silence after the brief send the caller back to the agent,
// who says so. The session owns the call; the carrier's side (placing the call, answering-machine
// detection) comes through the `DialPerson` port the app gives it.

import { Resampler } from "../../codecs/resample.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { PersonLegTimes } from "../records/call-record.ts";
import { CachedSpeech } from "./cached-speech.ts";
import { HoldAudio, holdAudioFile, holdTone } from "./hold-audio.ts";
import type { PersonAnswer } from "./person-answer.ts";
import type { SpeechSynthesizer } from "./services.ts";
import type { AgentAudio, CallTransport, DialPerson, NativeJoin, PersonLeg } from "./transport.ts";

export interface WarmTransferConfig {
  /** A WAV file looped to the caller on hold; default: holdTone. */
  holdAudio?: string;
  /** Said to the caller before the hold audio. */
  holdLine?: string;
  /** What the person is told (variables filled); default: the model's summary of the call. */
  brief?: string;
  /** Ringing allowed before the caller is taken back, ms. */
  answerMs: number;
}

/** Why the person was not reached: the carrier's outcome, or a machine that answered. */
export type PersonNotReachedOutcome = "busy" | "no-answer" | "failed" | "canceled" | "voicemail";

/** A DialPerson rejects with this when nobody (or a machine) answered. */
export class PersonNotReached extends Error {
  readonly outcome: PersonNotReachedOutcome;
  constructor(outcome: PersonNotReachedOutcome, reason: string) {
    super(reason);
    this.outcome = outcome;
  }
}

/** How it went; `leg`: the person's call, once someone answered. */
export type WarmOutcome =
  | { kind: "joined"; who: string; leg: PersonLegTimes }
  | {
      kind: "failed";
      outcome: PersonNotReachedOutcome | "declined" | "no-decision";
      why: string;
      leg?: PersonLegTimes;
    };

/** Hears the person's spoken answer (person-answer.ts's PersonEar). */
export interface AnswerEar {
  push(frame: Int16Array): void;
  close(): void;
}

export interface WarmTransferDeps {
  caller: CallTransport;
  dial: DialPerson;
  tts: SpeechSynthesizer;
  clock: Clock;
  log: Logger;
  config: WarmTransferConfig;
  /** Says words to the caller as the agent; resolves once heard. */
  sayToCaller(text: string): Promise<void>;
  /** The brief (ends with the question), made while the call rings. */
  brief(signal: AbortSignal): Promise<string>;
  /** After the join, the person hung up: the call is over. */
  personLeft(): void;
  /** Listens for a spoken yes or no from the person at `rate`; without it, the keypad alone. */
  ear?(rate: number, answered: (answer: PersonAnswer, words: string) => void): AnswerEar;
}

/** After answering, how long the person has to answer (a key, yes or no) once the brief has played, ms. */
export const DECISION_MS = 15_000;
/** Answering-machine detection after the answer comes on top of the ringing, at most, ms. */
export const AMD_ALLOWANCE_MS = 6000;

type Decision = "accept" | "decline" | "hung-up" | "no-decision";
type State = "holding" | "briefing" | "joining" | "joined" | "over";

export class WarmTransfer {
  readonly #d: WarmTransferDeps;
  readonly #abort = new AbortController();
  #state: State = "holding";
  #hold: HoldAudio | undefined;
  #leg: PersonLeg | undefined;
  /** The person's call once answered, before the brief takes it. */
  #answered: PersonLeg | undefined;
  #decide: ((d: Decision) => void) | undefined;
  #timer: TimerHandle | undefined;
  #toPerson: ((frame: Int16Array) => void) | undefined;
  #toCaller: ((frame: Int16Array) => void) | undefined;
  /** Joined by the carrier: neither call's media comes through the bridge any more. */
  #native = false;
  /** When the person's call ended here (its media), once accepted. */
  #personEndedAt: string | undefined;
  /** When the carrier was asked to join the calls: their joining time (their media ends after it). */
  #joinAskedAt: string | undefined;
  /** The person's call for the record, once answered. */
  #legTimes: PersonLegTimes | undefined;

  constructor(deps: WarmTransferDeps) {
    this.#d = deps;
  }

  get state(): State {
    return this.#state;
  }

  /** Who took the call, once they accepted (the calls being joined, or joined). */
  get takenBy(): string | undefined {
    return this.#state === "joining" || this.#state === "joined" ? this.#leg?.who : undefined;
  }

  /**
   * A frame from the caller: while held it goes nowhere (the agent is not listening: the caller
   * is waiting), once joined by the bridge to the person. False once the transfer is over (the agent listens).
   */
  callerAudio(frame: Int16Array): boolean {
    if (this.#state === "over") return false;
    if (this.#state === "joined") this.#toPerson?.(frame);
    return true;
  }

  async run(target: string): Promise<WarmOutcome> {
    const { dial, config, clock, log, caller } = this.#d;
    if (caller.output.kind !== "pcm")
      return this.#failed({
        kind: "failed",
        outcome: "failed",
        why: "a warm transfer cannot join an Opus call",
      });
    const signal = this.#abort.signal;
    const brief = this.#d
      .brief(signal)
      .catch(() => "I have a caller to transfer to you. Say yes or press 1 to take it.");
    const ringTimeoutS = Math.ceil(config.answerMs / 1000);
    const dialing = dial(target, { ringTimeoutS, signal, log });
    // Answered after the caller went (or while the hold line played and they went): hung up at once.
    dialing.then(
      (leg) => {
        this.#answered = leg;
        if (this.#over()) void leg.transport.hangUp("the caller hung up").catch(() => undefined);
      },
      () => {},
    );
    // The bridge's own deadline, whatever the carrier does with its ring timeout.
    const guard = new Promise<"late">((resolve) => {
      this.#timer = clock.setTimeout(() => resolve("late"), config.answerMs + AMD_ALLOWANCE_MS);
    });
    if (config.holdLine) await this.#d.sayToCaller(config.holdLine);
    if (this.#over()) return this.#closedOutcome();
    await this.#startHold();
    let leg: PersonLeg;
    try {
      const first = await Promise.race([dialing, guard]);
      if (first === "late") {
        this.#abort.abort();
        return this.#failed({ kind: "failed", outcome: "no-answer", why: `${target} did not answer` });
      }
      leg = first;
    } catch (err) {
      const e = err as Error;
      const outcome = e instanceof PersonNotReached ? e.outcome : "failed";
      return this.#failed({ kind: "failed", outcome, why: whyNotReached(target, outcome, e.message) });
    } finally {
      clock.clearTimeout(this.#timer);
    }
    this.#legTimes = { id: leg.transport.info.callId, who: leg.who, answeredAt: new Date().toISOString() };
    if (this.#over()) return this.#closedOutcome();
    if (leg.transport.output.kind !== "pcm") {
      void leg.transport.hangUp("cannot be joined").catch(() => undefined);
      return this.#failed({
        kind: "failed",
        outcome: "failed",
        why: `${target} answered on Opus, which cannot be joined`,
      });
    }
    this.#leg = leg;
    this.#state = "briefing";
    log.info({ target, who: leg.who }, "warm transfer: the person answered; briefing them");
    return this.#brief(leg, await brief);
  }

  /** Whether the transfer was closed meanwhile (the state changes across awaits). */
  #over(): boolean {
    return this.#state === "over";
  }

  /**
   * The caller went, or the session ends: whatever is under way stops, the person's call too
   * (not once the carrier has it: joined there, or being joined). Returns how the transfer ended
   * when it was still under way: while the carrier joins the calls, the caller's media ending is
   * that join's doing (or a hang-up once the person took the call): joined.
   */
  close(reason: string): WarmOutcome | undefined {
    const was = this.#state;
    if (was === "over") return undefined;
    const cut =
      was === "joined" ? undefined : was === "joining" ? this.#joinedOutcome() : this.#closedOutcome();
    this.#state = "over";
    this.#abort.abort();
    this.#d.clock.clearTimeout(this.#timer);
    this.#hold?.stop();
    this.#decide?.("hung-up");
    const leg = this.#leg ?? this.#answered;
    if (leg && was !== "joining" && !this.#native) void leg.transport.hangUp(reason).catch(() => undefined);
    return cut;
  }

  async #startHold(): Promise<void> {
    const { caller, config, clock, log } = this.#d;
    if (caller.output.kind !== "pcm") return;
    const rate = caller.output.rate;
    let loop = holdTone(rate);
    if (config.holdAudio)
      loop = await holdAudioFile(config.holdAudio, rate).catch((err: Error) => {
        log.error({ err: err.message }, "warm transfer: hold audio unreadable; the tone instead");
        return loop;
      });
    if (this.#state === "over") return;
    this.#hold = new HoldAudio(caller, clock, loop, rate);
    this.#hold.start();
  }

  async #brief(leg: PersonLeg, text: string): Promise<WarmOutcome> {
    const { clock, log } = this.#d;
    let briefEndMs: number | undefined;
    // The person's words count from the end of the brief: its own echo (it asks for a yes and a
    // no) is not their answer.
    let listening = false;
    const decided = new Promise<Decision>((resolve) => {
      this.#decide = resolve;
    });
    const ear = this.#d.ear?.(leg.transport.inputRate, (answer, words) => {
      if (this.#state !== "briefing") return;
      log.info({ answer, words }, "warm transfer: the person answered by voice");
      this.#decide?.(answer);
    });
    leg.transport.attach({
      audio: (frame) => {
        if (this.#state === "joined") this.#toCaller?.(frame);
        else if (this.#state === "briefing" && listening) ear?.push(frame);
      },
      dtmf: (digit) => {
        if (this.#state === "briefing") this.#decide?.(digit === "1" ? "accept" : "decline");
      },
      played: (ms) => {
        if (briefEndMs === undefined || ms < briefEndMs || this.#state !== "briefing") return;
        briefEndMs = undefined;
        listening = true;
        log.info("warm transfer: the brief was heard; waiting for the person's key");
      },
      ended: () => {
        // Once accepted, the person's media may end with the carrier's join: told apart by the join.
        if (this.#state === "joining" || this.#native) this.#personEndedAt ??= new Date().toISOString();
        if (this.#state === "joining" || this.#native) return;
        if (this.#state === "joined") {
          this.#state = "over";
          this.#d.personLeft();
        } else this.#decide?.("hung-up");
      },
    });
    const audio = await this.#synthesize(leg, text).catch((err: Error) => {
      log.error({ err: err.message }, "warm transfer: the brief could not be synthesized");
      return undefined;
    });
    if (audio && this.#state === "briefing") {
      leg.transport.play(audio);
      briefEndMs = leg.transport.queuedMs();
    } else listening = true;
    const briefMs = Math.max(0, leg.transport.queuedMs() - leg.transport.playedMs());
    this.#timer = clock.setTimeout(() => this.#decide?.("no-decision"), briefMs + DECISION_MS);
    const decision = await decided;
    ear?.close();
    clock.clearTimeout(this.#timer);
    this.#decide = undefined;
    if (this.#state === "over") return this.#closedOutcome();
    if (decision === "accept") return this.#join(leg);
    if (decision !== "hung-up") void leg.transport.hangUp(`transfer ${decision}`);
    const why =
      decision === "decline"
        ? `${leg.who} declined the call`
        : decision === "hung-up"
          ? `${leg.who} hung up without taking the call`
          : `${leg.who} answered but did not take the call`;
    return this.#failed({
      kind: "failed",
      outcome: decision === "no-decision" ? "no-decision" : "declined",
      why,
    });
  }

  async #join(leg: PersonLeg): Promise<WarmOutcome> {
    const { log, caller } = this.#d;
    this.#hold?.stop();
    leg.transport.clear();
    if (leg.join) {
      this.#state = "joining";
      this.#joinAskedAt = new Date().toISOString();
      const how = await leg
        .join()
        .catch((err: Error): NativeJoin => ({ kind: "unchanged", why: err.message }));
      const closed = this.#over(); // the caller's media ended meanwhile: close() took it as joined
      if (closed && how.kind === "unchanged") void leg.transport.hangUp("the caller hung up").catch(() => {});
      if (closed) return this.#closedOutcome();
      if (how.kind === "joined") {
        this.#native = true;
        this.#state = "joined";
        log.info(
          { who: leg.who },
          "warm transfer: accepted; the carrier joined the caller and the person, the bridge left the call",
        );
        return this.#joinedOutcome();
      }
      if (how.kind === "person-lost" || this.#personEndedAt)
        return this.#failed({
          kind: "failed",
          outcome: "failed",
          why:
            how.kind === "person-lost"
              ? `the calls could not be joined (${how.why})`
              : `${leg.who} hung up as the calls were joined`,
        });
      log.warn(
        { why: how.why },
        "warm transfer: the carrier could not join the calls; the bridge relays them",
      );
      this.#joinAskedAt = undefined; // joined once the relay starts
    }
    this.#toPerson = relay(caller.inputRate, leg.transport);
    this.#toCaller = relay(leg.transport.inputRate, caller);
    this.#state = "joined";
    log.info(
      { who: leg.who },
      "warm transfer: accepted; the bridge relays between the caller and the person",
    );
    return this.#joinedOutcome();
  }

  /** Joined now: the person's leg with its times (its end, when its media here has already ended). */
  #joinedOutcome(): WarmOutcome {
    const leg = this.#leg!;
    const joinedAt = this.#joinAskedAt ?? new Date().toISOString();
    const times = this.#legTimes ?? { id: leg.transport.info.callId, who: leg.who, answeredAt: joinedAt };
    const endedAt = this.#personEndedAt;
    return { kind: "joined", who: leg.who, leg: { ...times, joinedAt, ...(endedAt ? { endedAt } : {}) } };
  }

  #failed(outcome: Extract<WarmOutcome, { kind: "failed" }>): WarmOutcome {
    if (this.#state !== "over") {
      this.#state = "over";
      this.#hold?.stop();
    }
    this.#d.log.info({ outcome: outcome.outcome, why: outcome.why }, "warm transfer: back to the caller");
    // Someone answered: their call ended with the transfer's failure.
    const leg = this.#legTimes && { ...this.#legTimes, endedAt: new Date().toISOString() };
    return leg ? { ...outcome, leg } : outcome;
  }

  #closedOutcome(): WarmOutcome {
    const leg = this.#legTimes && { ...this.#legTimes, endedAt: new Date().toISOString() };
    return { kind: "failed", outcome: "canceled", why: "the call ended first", ...(leg ? { leg } : {}) };
  }

  async #synthesize(leg: PersonLeg, text: string): Promise<AgentAudio | undefined> {
    const speech = new CachedSpeech(text, leg.transport.output);
    await speech.prepare(this.#d.tts, this.#d.log);
    return speech.audio;
  }
}

/** Passes 20 ms frames from one leg's input rate to the other's output rate. */
function relay(fromRate: number, to: CallTransport): (frame: Int16Array) => void {
  if (to.output.kind !== "pcm") return () => {};
  if (to.output.rate === fromRate) return (frame) => to.play(frame.slice());
  const r = new Resampler(fromRate, to.output.rate);
  return (frame) => to.play(r.push(frame));
}

function whyNotReached(target: string, outcome: PersonNotReachedOutcome, reason: string): string {
  if (outcome === "busy") return `${target} is busy (${reason})`;
  if (outcome === "no-answer") return `${target} did not answer`;
  if (outcome === "voicemail") return `${target} went to voicemail`;
  return `the call to ${target} failed (${reason})`;
}
