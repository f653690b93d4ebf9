// Speakers talking over the agent. Each one pauses the agent after `bargeInMinMs` and
// interrupts it after `bargeInConfirmMs`; one who stops sooner was a backchannel or a cough.
// A stop is not taken at once: a speaker who goes on within a short gap (the VAD ends speech at
// a comma's pause: "Stop, | that's wrong") is still the same barge-in, timed from its start. One
// who goes on a little later, after the agent took up again, still is (REJOIN_MS).
// Kept per speaker, so an "mm-hm" from one member neither stops the agent nor cancels another
// member's real interruption; the agent resumes only when nobody is holding it. The interruption
// is confirmed by the speaker's own voice: when its time comes and their voice has just stopped
// (a long "okay okay" whose end the detector has yet to call), it waits for their voice to go on
// or their speech to end.
import type { Clock, TimerHandle } from "../core/clock.ts";

/** Whoever barges in: whether their own voice is still sounding (within `withinMs`, caller-voice.ts). */
export interface BargingVoice {
  voiceGoingOn(withinMs?: number): boolean;
  /** How long their voice has been silent, ms (0 where it is not judged: the detector alone says). */
  voiceSilentMs(): number;
}

/** How often an interruption held for the speaker's voice looks again, ms. */
const VOICE_RECHECK_MS = 20;
/**
 * Talk under way as the agent began pauses it only in a frame of the speaker's voice (this one or
 * the one before), ms: a "Hello?" that ended 70 ms into the greeting still counted as going on
 * 110 ms later (caller-voice.ts, GOING_ON_MS), and paused the greeting for 100 ms. A voice that
 * goes on sounds again within a consonant's length, and pauses it then. Not asked of other talk
 * over the agent: an interruption's fricatives ("Excuse me", "Just a second") are no voiced frame,
 * and waiting for one paused the agent 120–160 ms later in a café.
 */
const UNDER_WAY_SOUNDING_MS = 40;
/**
 * How long after the speaker's voice stops a quiet room's detector calls the end of their speech,
 * ms (164–212 over hiss:40). A loud room calls it later (~290 ms in a café 10 dB under the caller,
 * ~450 under a talker, where the level ends it after HANG_MS), and the gap after a backchannel
 * counted from that call made the agent stall 0.6–0.75 s after every "mm hmm" there, 0.48 in
 * quiet. The gap counts from here instead: in a loud room as long after the caller's voice as in a
 * quiet one, where it is as before.
 */
export const QUIET_END_CALLED_MS = 200;

/**
 * How long after the end of a short talk over the agent is reported to wait for its speaker to go
 * on, ms: `gapMs` from when a quiet room would have called that end, their voice silent for
 * `voiceSilentMs` by the report (BargingVoice.voiceSilentMs; 0 where it is not judged: the gap
 * counts from the report).
 */
export function gapAfterEndMs(gapMs: number, voiceSilentMs: number): number {
  return Math.max(0, gapMs - Math.max(0, voiceSilentMs - QUIET_END_CALLED_MS));
}
/**
 * Speech over the agent that goes on this long after the speaker's last stopped (the end as
 * reported), though the agent has resumed since, still continues that barge-in, ms. Over a loud
 * room a comma's pause is heard to end sooner and the voice to start again later: "Wait, | that's
 * the wrong shop" was two short sounds 520 ms apart as reported, under a conversation at the next
 * table and a shop's announcements, and the agent took both for backchannels and went on. The
 * agent still resumes after the gap (`stop`'s gapMs): a caller's "mm hmm" stalls it no longer.
 */
export const REJOIN_MS = 600;

interface Barge {
  startAt: number;
  /** Begun before the agent was heard: short, it is the speaker's turn of their own, not a backchannel. */
  underWay: boolean;
  pauseTimer: TimerHandle | undefined;
  confirmTimer: TimerHandle | undefined;
  /** Set while the speaker is silent, waiting whether they go on. */
  gapTimer: TimerHandle | undefined;
}

/** A short barge-in that is over, the agent resumed: who goes on soon enough continues it. */
interface Ended {
  startAt: number;
  /** When its speech was reported to have stopped. */
  stoppedAt: number;
  /** When it first silenced the agent: how soon the caller was heard is counted to then. */
  clearedAt: number | undefined;
}

export interface BargeInHost<K> {
  /** The agent should fall silent (audio dropped at the far side, resumable). */
  pause(): void;
  /** `who`'s talk-over is long enough to be an interruption: `bargeInMs` from its start to the silence. */
  interrupt(who: K, bargeInMs: number, startAt: number, clearedAt: number): void;
}

export class BargeIns<K extends BargingVoice> {
  readonly #clock: Clock;
  readonly #host: BargeInHost<K>;
  readonly #barges = new Map<K, Barge>();
  readonly #ended = new Map<K, Ended>();
  /** When the agent first fell silent for the barge-ins under way. */
  #clearedAt: number | undefined;

  constructor(clock: Clock, host: BargeInHost<K>) {
    this.#clock = clock;
    this.#host = host;
  }

  get active(): boolean {
    return this.#barges.size > 0;
  }

  has(who: K): boolean {
    return this.#barges.has(who);
  }

  /**
   * `who` began speaking over the agent at clock time `startAt` (`underWay`: they were speaking
   * already when the agent began to be heard). Returns false when it continues their barge-in after
   * a short gap, or within REJOIN_MS of its end (its start, and so its utterance, is the earlier one).
   */
  start(who: K, startAt: number, pauseAfterMs: number, interruptAfterMs: number, underWay = false): boolean {
    const going = this.#barges.get(who);
    if (going?.gapTimer) {
      this.#clock.clearTimeout(going.gapTimer);
      going.gapTimer = undefined;
      going.confirmTimer = this.#confirmTimer(
        who,
        going,
        interruptAfterMs - (this.#clock.now() - going.startAt),
      );
      return false;
    }
    const now = this.#clock.now();
    const ended = this.#ended.get(who);
    this.#ended.delete(who);
    // Going on soon after a pause the agent resumed in: the same barge-in, timed from its start.
    const rejoins = ended !== undefined && now - ended.stoppedAt <= REJOIN_MS;
    if (rejoins) this.#clearedAt ??= ended.clearedAt;
    const since = now - startAt;
    const barge: Barge = {
      startAt: rejoins ? ended.startAt : startAt,
      underWay,
      pauseTimer: undefined,
      confirmTimer: undefined,
      gapTimer: undefined,
    };
    // Going on after the agent resumed, it is the talk that paused it: it pauses it again at once,
    // not bargeInMinMs into what it talks over.
    const pauseMs = rejoins && ended.clearedAt !== undefined ? 0 : pauseAfterMs - since;
    barge.pauseTimer = this.#pauseTimer(who, barge, pauseMs);
    // Not before it pauses the agent: a click right after a backchannel stops nothing.
    const confirmMs = Math.max(pauseAfterMs - since, interruptAfterMs - (now - barge.startAt));
    barge.confirmTimer = this.#confirmTimer(who, barge, confirmMs);
    this.#barges.set(who, barge);
    return !rejoins;
  }

  /**
   * Pauses the agent in `delayMs`. Talk under way as the agent began waits for the speaker's voice
   * to sound (UNDER_WAY_SOUNDING_MS): one that has stopped is ending, the detector calling its end
   * ~300 ms later, and pauses nothing unless it sounds again.
   */
  #pauseTimer(who: K, barge: Barge, delayMs: number): TimerHandle {
    return this.#clock.setTimeout(() => {
      if (barge.underWay && !who.voiceGoingOn(UNDER_WAY_SOUNDING_MS)) {
        barge.pauseTimer = this.#pauseTimer(who, barge, VOICE_RECHECK_MS);
        return;
      }
      this.#pauseNow(barge);
    }, delayMs);
  }

  #pauseNow(barge: Barge): void {
    this.#clock.clearTimeout(barge.pauseTimer);
    barge.pauseTimer = undefined;
    this.#clearedAt ??= this.#clock.now();
    this.#host.pause();
  }

  /** Interrupts in `delayMs` (at once if not positive), if `who`'s voice is still going on then. */
  #confirmTimer(who: K, barge: Barge, delayMs: number): TimerHandle {
    return this.#clock.setTimeout(() => {
      if (!who.voiceGoingOn()) {
        barge.confirmTimer = this.#confirmTimer(who, barge, VOICE_RECHECK_MS);
        return;
      }
      // Under way, its pause may still wait for the voice that goes on now.
      if (barge.pauseTimer !== undefined) this.#pauseNow(barge);
      barge.confirmTimer = undefined;
      this.#clearedAt ??= this.#clock.now();
      this.#host.interrupt(who, Math.round(this.#clearedAt - barge.startAt), barge.startAt, this.#clearedAt);
    }, delayMs);
  }

  /**
   * `who` stopped speaking. False if their barge-in had already interrupted the agent (it is over).
   * True if it was short: a backchannel, unless they go on within `gapMs` of when a quiet room's
   * detector would have called their end (QUIET_END_CALLED_MS after their voice's last sound; then
   * start() continues it); `short()` is called once it is over, at once if it never even paused
   * the agent. False, and `short()` at once, for a short one begun before the agent was heard: the
   * agent goes on, and their words, begun before it, are their turn.
   */
  stop(who: K, gapMs: number, short: () => void): boolean {
    const barge = this.#barges.get(who);
    if (!barge || barge.gapTimer) return false;
    if (barge.confirmTimer === undefined) {
      this.end(who);
      return false;
    }
    if (barge.underWay) {
      this.end(who);
      short();
      return false;
    }
    this.#clock.clearTimeout(barge.confirmTimer);
    barge.confirmTimer = undefined;
    if (barge.pauseTimer !== undefined) {
      // Too short to have paused the agent: a click, nothing to wait for.
      this.end(who);
      short();
      return true;
    }
    const stoppedAt = this.#clock.now();
    barge.gapTimer = this.#clock.setTimeout(
      () => {
        barge.gapTimer = undefined;
        const clearedAt = this.#clearedAt;
        this.end(who);
        this.#ended.set(who, { startAt: barge.startAt, stoppedAt, clearedAt });
        short();
      },
      gapAfterEndMs(gapMs, who.voiceSilentMs()),
    );
    return true;
  }

  /**
   * `who` stopped speaking: true if it was short (not yet an interruption), and so a backchannel.
   * Either way their barge-in is over.
   */
  end(who: K): boolean {
    const barge = this.#barges.get(who);
    if (!barge) return false;
    const short = barge.confirmTimer !== undefined || barge.gapTimer !== undefined;
    this.#clock.clearTimeout(barge.pauseTimer);
    this.#clock.clearTimeout(barge.confirmTimer);
    this.#clock.clearTimeout(barge.gapTimer);
    this.#barges.delete(who);
    if (this.#barges.size === 0) this.#clearedAt = undefined;
    return short;
  }

  /** The agent's turn is over (interrupted or ended): every barge-in with it. */
  endAll(): void {
    this.#ended.clear();
    for (const who of [...this.#barges.keys()]) this.end(who);
  }
}
