// Talk over the agent, from the agent's side. Whoever talks over it makes it fall silent soon and
// interrupts it if they go on (barge-ins.ts). An interruption is then held for the words: the
// agent stays silent (paused, resumable) until they are recognized, and goes on where it fell
// silent if they only acknowledge ("okay okay", backchannel.ts) or there were none (a cough, a
// passing lorry); any other words stop it. The voice alone cannot tell these apart: a slow
// "okay okay" (870 ms in the noisy turn set) lasts as long as "Sorry, I'm in a hurry" (920 ms).
// LiveKit's agents likewise resume an interruption that brings no words, but not when the caller's
// own voice said there were some (spokeThrough): a recognizer can hear none in speech it cannot
// make out.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { AgentTurn } from "./agent-turn.ts";
import { onlyAcknowledges } from "./backchannel.ts";
import { BargeIns, type BargingVoice } from "./barge-ins.ts";
import type { TurnTakingConfig } from "./config.ts";

/**
 * Talk held for its words that brought none, in which a speaker whose words were heard before
 * sounded this long in their own voice (voiced, at their level, in their pitch), ms, was words the
 * recognizer could not make out, not a noise: the interruption stands. The embedded recognizer
 * heard nothing in "Wait, how much did you say?" and "No wait, go back." 10 dB over a street
 * (240–480 ms of the caller's voice; less where the detector ended their speech inside the phrase,
 * for only what it calls speech counts), and the agent went on over them. Noise has no pitch: in
 * 10 s of the noisy set's street, brown, pink noise and hiss the voice print found one in no frame,
 * in its café 7 frames (14 ms a second: 70 in the 5 s held talk lasts at most, a second to become
 * an interruption and HOLD_MAX_MS held). Another voice, or music, is told by its pitch.
 */
export const SPOKE_THROUGH_MS = 100;

/** What became of talk over the agent held for its words (Interruptions.words). */
export type HeldOutcome = "resumed" | "stopped" | "unheard";

/** Whoever talks over the agent, as the interruption held for their words sees them. */
export interface InterruptingVoice extends BargingVoice {
  /** How long their own voice sounded in the talk held, ms (0 where their voice is not judged). */
  ownVoiceInUtteranceMs(): number;
  /** The voice in the talk held came in syllables, not as a drone (voiced-stretches.ts). */
  voiceInSyllables(): boolean;
  /** Words of theirs were recognized earlier in the call (their voice is known from their speech). */
  readonly wordsHeard: boolean;
}

/**
 * `who`'s held talk brought no words, though it was speech of theirs (SPOKE_THROUGH_MS), in
 * syllables: a bus's engine as loud as the caller, in their pitch's range, sounded 0.8–1.9 s "in
 * their voice" over the agent, stopped it and had them asked to say it again.
 */
function spokeThrough(who: InterruptingVoice): boolean {
  return who.wordsHeard && who.ownVoiceInUtteranceMs() >= SPOKE_THROUGH_MS && who.voiceInSyllables();
}

/**
 * How long an interruption waits for its words, ms: longer than the longest acknowledgement takes
 * to say, to be heard to its end and recognized by a hosted service. Longer talk is no
 * acknowledgement; the interruption stands.
 */
export const HOLD_MAX_MS = 4000;

export interface InterruptionsHost {
  /** The agent's turn being heard, if any. */
  agent(): AgentTurn | undefined;
  readonly log: Logger;
  /** What became of talk over the agent, for the call's record. */
  record(outcome: "interrupted" | "resumed"): void;
  /** The agent went on after talk over it. */
  resumed(): void;
}

export class Interruptions<K extends InterruptingVoice> {
  readonly #clock: Clock;
  readonly #host: InterruptionsHost;
  /** Who is talking over the agent, each with their own timers. */
  readonly barges: BargeIns<K>;
  /** The interruption waiting for its words. */
  #held: { who: K; agent: AgentTurn; timer: TimerHandle } | undefined;
  /** The barge-in that interrupted the agent, for the turn's metrics. */
  interruptedBy: { startAt: number; clearedAt: number } | undefined;

  constructor(clock: Clock, host: InterruptionsHost) {
    this.#clock = clock;
    this.#host = host;
    this.barges = new BargeIns(clock, {
      pause: () => {
        host.agent()?.pause();
        host.log.debug("caller speaking over the agent: paused");
      },
      interrupt: (who, bargeInMs, startAt, clearedAt) => {
        const agent = host.agent();
        if (!agent) return;
        host.log.info({ bargeInMs }, "caller interrupted the agent: silent until their words are in");
        this.interruptedBy = { startAt, clearedAt };
        this.#hold(who, agent);
      },
    });
  }

  /** Whether `agent` is held silent by an interruption waiting for its words. */
  holds(agent: AgentTurn | undefined): boolean {
    return agent !== undefined && this.#held?.agent === agent;
  }

  /** Whether `who`'s interruption is waiting for its words. */
  heldBy(who: K | undefined): boolean {
    return who !== undefined && this.#held?.who === who;
  }

  /**
   * `who`'s words are in (`failed`: none could be recognized). "resumed" if they only acknowledge,
   * or there were none and it was not their voice: the agent goes on. Else it stops, and this
   * resolves once its turn is done (what was heard of it is in the history, before the words that
   * stopped it): "unheard" when their voice brought no words (SPOKE_THROUGH_MS), "stopped" (and for
   * talk not held) otherwise.
   */
  async words(who: K, text: string, failed: boolean): Promise<HeldOutcome> {
    if (!this.heldBy(who)) return "stopped";
    if (!failed && !text && spokeThrough(who)) {
      this.#host.log.info(
        { ownVoiceMs: Math.round(who.ownVoiceInUtteranceMs()) },
        "no words made out in the caller's own voice over the agent: the interruption stands",
      );
      await this.interrupt();
      return "unheard";
    }
    if (!failed && onlyAcknowledges(text)) {
      this.#letGo();
      this.#goOn(
        text ? "only an acknowledgement over the agent: resuming" : "no words over the agent: resuming",
      );
      return "resumed";
    }
    await this.interrupt();
    return "stopped";
  }

  /** The held interruption stands: the agent stops, and this resolves once its turn is done. */
  async interrupt(): Promise<void> {
    const held = this.#held;
    if (!held) return;
    this.#release();
    this.#host.log.info("the interruption stands: the agent stops");
    this.#host.record("interrupted");
    held.agent.interrupt(); // its done handler records what was heard
    await held.agent.done;
  }

  /**
   * Talk under way when `turn`'s first words are heard is talk over them: a caller who began just
   * before a hosted service's greeting came (a second or more into the call) is not talked over for
   * as long as they go on. `speaking()`: who is speaking then.
   */
  underWay(turn: AgentTurn, speaking: () => readonly K[], t: TurnTakingConfig): void {
    turn.onFirstPlay = () => {
      if (this.#host.agent() !== turn) return;
      for (const who of speaking())
        if (!this.barges.has(who))
          this.barges.start(who, this.#clock.now(), t.bargeInMinMs, t.bargeInConfirmMs, true);
    };
  }

  /** Talk over the agent ended short (a backchannel, a cough): it goes on, unless someone holds it. */
  resumeShort(): void {
    this.#goOn("short speech over the agent: resuming");
  }

  /** `who` left: their interruption, if held, no longer holds the agent back. */
  left(who: K): void {
    const held = this.heldBy(who);
    if (!this.barges.has(who) && !held) return;
    this.barges.end(who);
    if (held) this.#letGo();
    this.#resumeIfFree();
  }

  /** `agent`'s turn is over, however it ended: no interruption holds it any more. */
  agentDone(agent: AgentTurn): void {
    if (this.#held?.agent === agent) this.#release();
  }

  /** The interrupted turn is filed (with interruptedBy): every barge-in ended with it. */
  interruptionOver(): void {
    this.barges.endAll();
    this.interruptedBy = undefined;
  }

  #goOn(why: string): void {
    this.#resumeIfFree();
    this.#host.log.info(why);
    this.#host.record("resumed");
    this.#host.resumed();
  }

  #hold(who: K, agent: AgentTurn): void {
    if (this.#held) return; // already silent, for another's words
    const timer = this.#clock.setTimeout(() => {
      this.#host.log.info("no words in time over the agent: the interruption stands");
      void this.interrupt();
    }, HOLD_MAX_MS);
    this.#held = { who, agent, timer };
  }

  /** The agent goes on, unless someone is still talking over it or an interruption holds it. */
  #resumeIfFree(): void {
    if (!this.barges.active && !this.#held) this.#host.agent()?.resume();
  }

  /** The held interruption did not stand: nothing holds the agent, and nothing interrupted it. */
  #letGo(): void {
    this.#release();
    this.interruptedBy = undefined;
  }

  #release(): void {
    this.#clock.clearTimeout(this.#held?.timer);
    this.#held = undefined;
  }
}
