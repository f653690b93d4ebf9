// Where the caller's own voice stops inside speech the detector still hears. In a loud room the
// room keeps the detector "in speech" after the caller's last word, so the gate (caller-voice.ts)
// ends their speech by their level: nothing at it for HANG_MS, or nothing near their usual level
// for USUAL_LEVEL_GONE_MS. This keeps, frame by frame while they speak, when their voice was
// last heard at each level that keeps it going, and says when it has stopped and where.
import type { CallerLevel } from "./caller-level.ts";
import type { VoicePrint } from "./voice-print.ts";
import { VoicedStretches } from "./voiced-stretches.ts";

/** Nothing at the caller's level for this long, while the detector still hears speech, ends theirs, ms. */
export const HANG_MS = 450;
/** How long after their last frame at their level a caller's soft last word may go on, ms. */
export const SOFT_MS = 600;
/**
 * A room's voice within CONTINUE_BELOW_DB of the caller keeps their speech going, but seldom
 * reaches their usual level (its median), which theirs reaches at every stressed syllable: nothing
 * within USUAL_LEVEL_DB of it for USUAL_LEVEL_GONE_MS ends their speech, where their last such
 * frame and a soft last word after it end (a reverberant television 10 dB under the caller held
 * their turns open 1–3 s), dB and ms.
 */
const USUAL_LEVEL_DB = 2;
const USUAL_LEVEL_GONE_MS = 1000;
/**
 * The caller's voice counts as going on this long after their last frame at their onset level
 * (the frame's own level, not the short one, which lags), ms: longer than a stop's closure, and
 * shorter than the ~300 ms the detector takes to call an end, so an interruption is confirmed by
 * about as much of the caller's voice in a noisy room (where the end comes later) as in a quiet one.
 */
export const GOING_ON_MS = 200;

export class VoiceEnd {
  readonly #level: CallerLevel;
  readonly #print: VoicePrint;
  /** End of the last frame at the caller's level in their current speech (short level; own level). */
  #lastLoudEndMs = 0;
  /** ...and of the last at their soft level (a soft last word). */
  #lastSoftEndMs = 0;
  /** ...and of the last within USUAL_LEVEL_DB of their usual level. */
  #lastUsualEndMs = 0;
  /** End of the last frame whose own level (not the short one) kept the caller's speech going. */
  #lastRawContEndMs = 0;
  /** ...and of the last at their onset level, a voice's. */
  #lastRawLoudEndMs = 0;
  /** Frames of the caller's speech in which their own voice sounded (ownFrames). */
  #ownFrames = 0;
  /** A voice at their level in their speech, of no other pitch than theirs (voiced). */
  readonly voiced = new VoicedStretches();

  constructor(level: CallerLevel, print: VoicePrint) {
    this.#level = level;
    this.#print = print;
  }

  /** The caller's voice, at every level that keeps their speech going, was last heard at `nowMs`. */
  heardNow(nowMs: number): void {
    this.#lastLoudEndMs =
      this.#lastSoftEndMs =
      this.#lastUsualEndMs =
      this.#lastRawLoudEndMs =
      this.#lastRawContEndMs =
        nowMs;
  }

  /**
   * A frame of the caller's speech ending at `nowMs`, at its own level `rawDb`, judged against
   * their level before it learns this frame (their voice going on, their own voice sounding).
   */
  loud(nowMs: number, rawDb: number, frameMs: number): void {
    // A noise as loud as they are is not their voice going on: a street's right after a short
    // "okay" made it an interruption, held for words the embedded recognizer then misheard.
    if (rawDb < this.#level.onsetDb() || this.#print.aperiodic()) return;
    this.#lastRawLoudEndMs = nowMs;
    const whose = this.#print.known ? this.#print.whose() : undefined;
    if (whose === "other") return;
    this.voiced.add(nowMs, frameMs);
    if (whose === "theirs") this.#ownFrames++;
  }

  /**
   * The same frame at its short level `db`, judged against their level once it has learned this
   * frame: where their voice stopped (stream ms) if it has, else undefined.
   */
  stoppedAt(nowMs: number, db: number, rawDb: number): number | undefined {
    const level = this.#level;
    // A voice of another pitch, softer than theirs, does not keep their speech going: the room's
    // talker going on as they stop. Only a frame that would keep it going needs its pitch found.
    if (Math.max(db, rawDb) >= level.softDb() && !this.#otherSoftVoice(rawDb)) {
      if (rawDb >= level.continueDb()) this.#lastRawContEndMs = nowMs;
      if (db >= level.continueDb()) this.#lastLoudEndMs = this.#lastSoftEndMs = nowMs;
      else if (db >= level.softDb() && nowMs - this.#lastLoudEndMs < SOFT_MS) this.#lastSoftEndMs = nowMs;
    }
    if (db >= level.callerDb - USUAL_LEVEL_DB) this.#lastUsualEndMs = nowMs;
    const usualGone = nowMs - this.#lastUsualEndMs >= USUAL_LEVEL_GONE_MS;
    if (nowMs - this.#lastSoftEndMs < HANG_MS && !usualGone) return undefined;
    // The room goes on; the caller's own voice stopped at their last frame at their level (or at
    // the end of a soft last word).
    return usualGone ? Math.min(this.#lastSoftEndMs, this.#lastUsualEndMs + SOFT_MS) : this.#lastSoftEndMs;
  }

  /**
   * The caller's voice sounded within `withinMs` before `nowMs`: a frame at their onset level with
   * some period in it (not a noise as loud, VoicePrint.aperiodic).
   */
  goingOn(nowMs: number, withinMs = GOING_ON_MS): boolean {
    return nowMs - this.#lastRawLoudEndMs <= withinMs;
  }

  /** How long the caller's voice has been silent at `nowMs`, ms: since their last frame at their soft level. */
  silentMs(nowMs: number): number {
    return Math.max(0, nowMs - this.#lastSoftEndMs);
  }

  /** How long no frame's own level has kept their speech going at `nowMs`, ms. */
  quietMs(nowMs: number): number {
    return nowMs - this.#lastRawContEndMs;
  }

  /** Where the caller's voice was last heard in their speech (stream ms): at their soft level. */
  get heardMs(): number {
    return this.#lastSoftEndMs;
  }

  /** Where it was last heard at their level (stream ms). */
  get loudEndMs(): number {
    return this.#lastLoudEndMs;
  }

  /** Frames of the caller's speech in which their own voice sounded: at their level, voiced, in their pitch. */
  get ownFrames(): number {
    return this.#ownFrames;
  }

  /**
   * The frame is voiced in a pitch outside the caller's, softer than their onset level: the room's
   * voice (a talker 10 dB under them held a turn open 2.8 s after their voice ended).
   */
  #otherSoftVoice(rawDb: number): boolean {
    return this.#print.known && rawDb < this.#level.onsetDb() && this.#print.whose() === "other";
  }
}
