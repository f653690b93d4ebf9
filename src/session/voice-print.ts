// What a caller's voice sounds like beyond its level: the range of its pitch (10th to 90th
// percentile, semitones), learned frame by frame from frames known to be theirs. A talker behind
// the caller, or one taken for them before they spoke, is usually of another pitch: a voice
// whose pitch lies OTHER_PITCH_ST outside the range is another's (caller-voice.ts decides when
// that counts).
import { QuantileTracker } from "../../codecs/level-tracker.ts";
import { FramePitch } from "../../codecs/pitch.ts";

/** A pitch this far outside the caller's range is another voice's, semitones. */
const OTHER_PITCH_ST = 2;
/** The range is known after this many voiced frames (0.5 s). */
const KNOWN_FRAMES = 25;
/** Once known, it learns from one frame in this many (YIN costs 5–15 µs a frame). */
const LEARN_EVERY = 4;
/**
 * A frame whose YIN difference dips under this at some lag came near a period. Noise does now and
 * then, by chance (a street's frames 3 % of the time, brown noise's 5 %), for a frame; a voice does
 * frame after frame, even where music or a TV hides its pitch (0.2–0.46 in a caller's last word
 * under music).
 */
const NEAR_PERIOD_DIFFERENCE = 0.5;

export class VoicePrint {
  readonly #pitch = new FramePitch();
  readonly #low = new QuantileTracker(0.1, 1);
  readonly #high = new QuantileTracker(0.9, 1);
  #frames = 0;
  #tick = 0;
  /** The last frame's pitch once found (it is asked for up to three times a frame), else undefined. */
  #st: number | undefined;
  /** The last frame came near a period (voiced, or nearly), once its pitch was found. */
  #nearPeriod = false;
  /** ...and the frame before it (true if its pitch was never asked for: nothing says otherwise). */
  #nearPeriodBefore = false;

  /** Every frame of the speaker's audio (20 ms at 8 or 16 kHz), in order. */
  frame(pcm: Int16Array, rate: number): void {
    this.#pitch.push(pcm, rate);
    this.#nearPeriodBefore = this.#st === undefined || this.#nearPeriod;
    this.#st = undefined;
  }

  /** The range has been learned. */
  get known(): boolean {
    return this.#frames >= KNOWN_FRAMES;
  }

  /** The last frame's pitch (semitones above 100 Hz), NaN when unvoiced. */
  pitch(): number {
    if (this.#st === undefined) {
      this.#st = this.#pitch.pitch();
      this.#nearPeriod = !Number.isNaN(this.#st) || this.#pitch.lowestDifference <= NEAR_PERIOD_DIFFERENCE;
    }
    return this.#st;
  }

  /**
   * The last frame is a noise, whatever its loudness, not a voice: unvoiced, and it and the frame
   * before (where that was looked at) did not both come near a period.
   */
  aperiodic(): boolean {
    return Number.isNaN(this.pitch()) && !(this.#nearPeriod && this.#nearPeriodBefore);
  }

  /**
   * The last frame's voice against the range learned: "other" when its pitch lies OTHER_PITCH_ST
   * or more outside it, else "theirs"; undefined when the frame is unvoiced.
   */
  whose(): "theirs" | "other" | undefined {
    const st = this.pitch();
    if (Number.isNaN(st)) return undefined;
    return st <= this.#low.value - OTHER_PITCH_ST || st >= this.#high.value + OTHER_PITCH_ST
      ? "other"
      : "theirs";
  }

  /** The last frame is the caller's: its pitch, if voiced, joins the range. */
  learn(): void {
    if (this.known && ++this.#tick % LEARN_EVERY !== 0) return;
    const st = this.pitch();
    if (Number.isNaN(st)) return;
    this.#low.push(st);
    this.#high.push(st);
    this.#frames++;
  }

  reset(): void {
    this.#low.reset();
    this.#high.reset();
    this.#frames = 0;
  }
}
