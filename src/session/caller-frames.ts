// The last five seconds of a caller's audio as the gate (caller-voice.ts) saw it, frame by frame:
// each frame's short level, power and end, and what the gate found in it. The detector calls
// onsets and ends 100–300 ms late, referring back to stream positions, and the room learns a
// frame only once it is old enough to be sure it was not the caller's: both read back through
// this ring. Frame `i` is the `i`th of the call, kept while `i >= oldest`. Allocates nothing.
import { NO_SIGNAL_DB, powerDb } from "../../codecs/level-tracker.ts";

/** Frames kept (5 s of 20 ms frames). */
const RING = 256;
/** The most frames each side of a frame that popAt may look at. */
const MAX_POP_SIDE = 4;
/** A frame's length where the ring no longer holds the one before it, ms. */
const FRAME_MS = 20;
/** The frames a frame's short level is measured over (~100 ms). */
export const SHORT_FRAMES = 5;

/** What the gate found in a frame as it came. */
export interface FrameMarks {
  /** It was taken for the caller's speech (the room never learns from it). */
  mine: boolean;
  /** The detector heard speech. */
  speech: boolean;
  /** At a near voice's level, and voiced. */
  nearVoiced: boolean;
  /** At a voice's level clear of the room, in the caller's pitch. */
  clearVoiced: boolean;
  /** At the caller's onset level or above, in their pitch. */
  theirVoice: boolean;
  /** Under their onset level, at their softer level or above (CallerLevel.softerDb), a voice not of another pitch. */
  softerTheirs: boolean;
  /** The detector heard speech where the line's level held the gate (caller-voice.ts, LINE_BELOW_DB). */
  held: boolean;
}

export class CallerFrames {
  readonly #db = new Float64Array(RING);
  readonly #pow = new Float64Array(RING);
  readonly #endMs = new Float64Array(RING);
  readonly #mine = new Uint8Array(RING);
  readonly #speech = new Uint8Array(RING);
  readonly #nearVoiced = new Uint8Array(RING);
  readonly #clearVoiced = new Uint8Array(RING);
  readonly #theirVoice = new Uint8Array(RING);
  readonly #softerTheirs = new Uint8Array(RING);
  readonly #held = new Uint8Array(RING);
  /** The powers of a frame and those around it, sorted (popAt). */
  readonly #around = new Float64Array(2 * MAX_POP_SIDE + 1);
  #written = 0;

  /** Frames written since the call began: the next frame's index. */
  get written(): number {
    return this.#written;
  }

  /** The oldest frame still held. */
  get oldest(): number {
    return Math.max(0, this.#written - RING);
  }

  /** A frame: its short level (dBFS), its own power (mean square), where it ended (ms), and marks. */
  add(db: number, power: number, endMs: number, marks: Readonly<FrameMarks>): void {
    const k = this.#written++ % RING;
    this.#db[k] = db;
    this.#pow[k] = power;
    this.#endMs[k] = endMs;
    this.#mine[k] = marks.mine ? 1 : 0;
    this.#speech[k] = marks.speech ? 1 : 0;
    this.#nearVoiced[k] = marks.nearVoiced ? 1 : 0;
    this.#clearVoiced[k] = marks.clearVoiced ? 1 : 0;
    this.#theirVoice[k] = marks.theirVoice ? 1 : 0;
    this.#softerTheirs[k] = marks.softerTheirs ? 1 : 0;
    this.#held[k] = marks.held ? 1 : 0;
  }

  /** Frame `i`'s short level, dBFS. */
  db(i: number): number {
    return this.#db[i % RING]!;
  }

  /** Frame `i`'s own power (mean square). */
  power(i: number): number {
    return this.#pow[i % RING]!;
  }

  /** Where frame `i` ended, ms. */
  endMs(i: number): number {
    return this.#endMs[i % RING]!;
  }

  /** Where frame `i` began, ms. */
  startMs(i: number): number {
    return i > this.oldest ? this.#endMs[(i - 1) % RING]! : this.#endMs[i % RING]! - FRAME_MS;
  }

  mine(i: number): boolean {
    return this.#mine[i % RING] === 1;
  }

  speech(i: number): boolean {
    return this.#speech[i % RING] === 1;
  }

  nearVoiced(i: number): boolean {
    return this.#nearVoiced[i % RING] === 1;
  }

  clearVoiced(i: number): boolean {
    return this.#clearVoiced[i % RING] === 1;
  }

  /** The frames from `from` on that end after `afterMs` are the caller's (`mine`) or not. */
  markMine(from: number, afterMs: number, mine: boolean): void {
    this.#markAfter(this.#mine, from, afterMs, mine);
  }

  /** Frame `i` was marked softerTheirs: it may start the caller's speech under their onset level. */
  softerTheirs(i: number): boolean {
    return this.#softerTheirs[i % RING] === 1;
  }

  /** The frames from `from` on that end after `afterMs` are marked held. */
  markHeld(from: number, afterMs: number): void {
    this.#markAfter(this.#held, from, afterMs, true);
  }

  /** Frame `i` was marked held: a voice the line's level kept from starting the caller's speech. */
  held(i: number): boolean {
    return this.#held[i % RING] === 1;
  }

  /** Frame `i` lies within `span` frames of one marked theirVoice. */
  nearTheirVoice(i: number, span: number): boolean {
    const to = Math.min(this.#written, i + span + 1);
    for (let j = Math.max(0, i - span, this.oldest); j < to; j++)
      if (this.#theirVoice[j % RING] === 1) return true;
    return false;
  }

  /**
   * The level over frame `i` and up to `frames − 1` before it, of those that end after `fromMs`:
   * where the detector's speech began, a sound before it is not its onset, dBFS.
   */
  levelSince(i: number, fromMs: number, frames: number): number {
    let sum = 0;
    let n = 0;
    for (let j = i; j > i - frames && j >= this.oldest; j--) {
      if (this.#endMs[j % RING]! <= fromMs) break;
      sum += this.#pow[j % RING]!;
      n++;
    }
    return n === 0 ? NO_SIGNAL_DB : powerDb(sum / n);
  }

  /**
   * Frame `i` stood `aboveDb` over the median of the frames around it (`side` each side, at most
   * MAX_POP_SIDE, of those written so far): a pop, if it lasted no more than `side` frames.
   */
  popAt(i: number, side: number, aboveDb: number): boolean {
    if (side > MAX_POP_SIDE) throw new RangeError(`popAt looks ${MAX_POP_SIDE} frames each side at most`);
    const from = Math.max(this.oldest, i - side);
    const n = Math.min(this.#written - 1, i + side) - from + 1;
    const w = this.#around;
    for (let k = 0; k < n; k++) {
      // Insertion sort: a handful of values.
      const p = this.#pow[(from + k) % RING]!;
      let j = k;
      for (; j > 0 && w[j - 1]! > p; j--) w[j] = w[j - 1]!;
      w[j] = p;
    }
    return this.#pow[i % RING]! > w[(n - 1) >> 1]! * 10 ** (aboveDb / 10);
  }

  /**
   * The level over frame `i` and up to `frames − 1` before it, leaving out the pops among them
   * (popAt with `side` and `aboveDb`), dBFS; NO_SIGNAL_DB if nothing else is left.
   */
  levelWithoutPops(i: number, frames: number, side: number, aboveDb: number): number {
    let sum = 0;
    let n = 0;
    for (let j = Math.max(this.oldest, i - frames + 1); j <= i; j++) {
      if (this.popAt(j, side, aboveDb)) continue;
      sum += this.#pow[j % RING]!;
      n++;
    }
    return n === 0 ? NO_SIGNAL_DB : powerDb(sum / n);
  }

  /** Sets mark `marks` to `on` on the frames from `from` on that end after `afterMs`. */
  #markAfter(marks: Uint8Array, from: number, afterMs: number, on: boolean): void {
    for (let i = Math.max(from, this.oldest); i < this.#written; i++)
      if (this.#endMs[i % RING]! > afterMs) marks[i % RING] = on ? 1 : 0;
  }

  /** The loudest short level among frames `from`..`to`, dBFS. */
  loudest(from: number, to: number): number {
    let max = NO_SIGNAL_DB;
    for (let i = Math.max(0, from); i <= to; i++) max = Math.max(max, this.#db[i % RING]!);
    return max;
  }

  /** The loudest short level of the frames held that end after `fromMs`, dBFS. */
  loudestSince(fromMs: number): number {
    let max = NO_SIGNAL_DB;
    for (let i = this.oldest; i < this.#written; i++)
      if (this.#endMs[i % RING]! > fromMs) max = Math.max(max, this.#db[i % RING]!);
    return max;
  }
}
