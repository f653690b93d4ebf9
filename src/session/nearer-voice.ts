// A nearer voice than the one taken for the caller's. Before the caller speaks, a talker behind
// them is the only voice there is, and the gate (caller-voice.ts) takes it for theirs. The caller's
// own voice, once it comes, shows it: far louder than the level learned (LOUDER_VOICE_DB), or
// louder and of another pitch than the one learned (voice-print.ts). Then the voice taken so far
// was the room's: the caller's level and pitch are learned anew, and their speech begins at the
// nearer voice's first frame. This also learns the caller's pitch, from frames at their level.
import { type CallerLevel, LOUDER_VOICE_DB } from "./caller-level.ts";
import type { VoicePrint } from "./voice-print.ts";

/** Frames in a row LOUDER_VOICE_DB over the caller's level that are a nearer voice. */
const LOUDER_FRAMES = 2;
/**
 * A voice this much louder than the caller's level, of another pitch than theirs (voice-print.ts),
 * in OTHER_FRAMES voiced frames within OTHER_WITHIN_MS (and none of their pitch as loud between
 * them), is another, nearer voice: the one taken for the caller's was the room's (a talker heard
 * before the caller spoke). Level alone takes LOUDER_VOICE_DB, dB.
 */
const OTHER_VOICE_DB = 6;
const OTHER_FRAMES = 3;
const OTHER_WITHIN_MS = 400;
/**
 * For this long from a frame OTHER_VOICE_DB above the caller's level, a louder voice is judged
 * against their level before it (#louderRef), ms...
 */
const LOUDER_WITHIN_MS = 600;
/**
 * ...once that level has been learned from this many frames (2 s of speech): a level learned
 * from less may be the caller's own soft start, and their next stressed syllable is not another.
 */
const LOUDER_KNOWN_FRAMES = 100;
/** Frames within this of the caller's level are theirs to learn their pitch from, dB. */
const PRINT_WITHIN_DB = 4;
/**
 * ...and above the room's voices' peaks by this much, or at their level: a talker's loudest
 * syllables are not theirs (a caller's level a talker pulled down took the talker's pitch for theirs).
 */
const PRINT_OVER_ROOM_DB = 3;

export class NearerVoice {
  readonly #level: CallerLevel;
  readonly #print: VoicePrint;
  /** Frames in a row LOUDER_VOICE_DB over the caller's level. */
  #run = 0;
  /**
   * Voiced frames of another voice (see OTHER_VOICE_DB) within OTHER_WITHIN_MS of the first (until
   * `#otherUntilMs`), where they began, and the caller's level then.
   */
  #otherCount = 0;
  #otherFrom = 0;
  #otherUntilMs = 0;
  #otherRefDb = 0;
  /** The level a louder voice is judged against until `#louderUntilMs` (#louderRef). */
  #louderRefDb = 0;
  #louderUntilMs = Number.NEGATIVE_INFINITY;

  constructor(level: CallerLevel, print: VoicePrint) {
    this.#level = level;
    this.#print = print;
  }

  /**
   * Frame `index` of the caller's speech, its short level `db` and its own `rawDb`, ending at
   * `nowMs` (before the caller's level learns it): the first frame of a nearer voice, once found
   * (the caller's level and pitch are then learned anew); else undefined.
   */
  frame(db: number, rawDb: number, nowMs: number, index: number): number | undefined {
    const caller = this.#louderRef(rawDb, nowMs);
    if (Number.isFinite(caller) && db >= caller + LOUDER_VOICE_DB) {
      if (++this.#run >= LOUDER_FRAMES) {
        // From its own first loud frame: the softer frames before it are the room's.
        return this.#found(index + 1 - this.#run);
      }
    } else this.#run = 0;
    return this.#byPitch(rawDb, nowMs, index);
  }

  /** The caller's speech began or the detector's ended: a run of louder frames starts over. */
  restartRun(): void {
    this.#run = 0;
  }

  /** The caller's level is learned anew (another voice was theirs): and so is all else of theirs. */
  reset(): void {
    this.#louderUntilMs = Number.NEGATIVE_INFINITY;
    this.#otherCount = 0;
    this.#print.reset();
  }

  /** The nearer voice begins at frame `from`: all that was learned of the caller's is learned anew. */
  #found(from: number): number {
    this.#run = 0;
    this.#level.otherVoice();
    this.reset();
    return from;
  }

  /**
   * The caller's pitch, learned from frames at their level; and another voice told from theirs by
   * pitch, louder than theirs by less than LOUDER_VOICE_DB (the room's voice, taken for theirs
   * before they spoke, is still the one learned).
   */
  #byPitch(db: number, nowMs: number, index: number): number | undefined {
    const caller = this.#level.callerDb;
    if (!Number.isFinite(caller)) return undefined;
    if (this.#otherCount > 0 && nowMs > this.#otherUntilMs) this.#otherCount = 0;
    // Against the level before the other voice began: the caller's level learns from its frames.
    const ref = this.#otherCount > 0 ? this.#otherRefDb : caller;
    if (this.#print.known && db >= ref + OTHER_VOICE_DB) {
      const whose = this.#print.whose();
      if (whose === undefined) return undefined;
      if (whose === "theirs") {
        this.#otherCount = 0;
        return undefined;
      }
      if (this.#otherCount++ === 0) {
        this.#otherFrom = index;
        this.#otherRefDb = caller;
        this.#otherUntilMs = nowMs + OTHER_WITHIN_MS;
      }
      if (this.#otherCount < OTHER_FRAMES) return undefined;
      return this.#found(this.#otherFrom);
    }
    // Not from what may be another voice's.
    if (
      this.#otherCount === 0 &&
      Math.abs(db - caller) < PRINT_WITHIN_DB &&
      db >= Math.min(caller, this.#level.roomPeakDb + PRINT_OVER_ROOM_DB)
    )
      this.#print.learn();
    return undefined;
  }

  /**
   * The caller's level a louder voice is judged against: from a frame OTHER_VOICE_DB above it on,
   * for LOUDER_WITHIN_MS, the level before it (their level learns from the louder voice's frames,
   * and a caller 10 dB above a talker taken for them was never 12 dB above a level that followed
   * them up).
   */
  #louderRef(rawDb: number, nowMs: number): number {
    const caller = this.#level.callerDb;
    if (nowMs <= this.#louderUntilMs) return Math.min(caller, this.#louderRefDb);
    if (this.#level.callerFrames >= LOUDER_KNOWN_FRAMES && rawDb >= caller + OTHER_VOICE_DB) {
      this.#louderRefDb = caller;
      this.#louderUntilMs = nowMs + LOUDER_WITHIN_MS;
    }
    return caller;
  }
}
