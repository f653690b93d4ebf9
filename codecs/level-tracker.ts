// Levels of a sound as it goes, for telling a near voice from the room behind it: the power of a
// frame, a short running level over the last few frames, and a running quantile of levels. All of
// it is a few multiplications per frame and allocates nothing after construction.

/** Levels at or below this carry no information (digital silence, a muted line), dBFS. */
export const NO_SIGNAL_DB = -90;

/** Mean square of `pcm` (full scale = 1). */
export function meanSquare(pcm: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return sum / (Math.max(1, pcm.length) * 32768 * 32768);
}

/** A power (full scale = 1) in dBFS, floored at −120. */
export function powerDb(power: number): number {
  return power > 1e-12 ? 10 * Math.log10(power) : -120;
}

/**
 * The level of the last `frames` frames: the mean of their powers, in dBFS. About 100 ms is what a
 * syllable's nucleus lasts, long enough to smooth over a voice's pitch periods and stop closures.
 */
export class ShortLevel {
  readonly #powers: Float64Array;
  #at = 0;
  #sum = 0;
  /** Frames seen, up to the window (the first frames are averaged over as many as there are). */
  #count = 0;

  constructor(frames: number) {
    this.#powers = new Float64Array(Math.max(1, frames));
  }

  /** Adds a frame's power; returns the running level, dBFS. */
  push(power: number): number {
    const p = this.#powers;
    this.#sum += power - p[this.#at]!;
    p[this.#at] = power;
    this.#at = (this.#at + 1) % p.length;
    if (this.#count < p.length) this.#count++;
    return powerDb(Math.max(0, this.#sum) / this.#count);
  }

  reset(): void {
    this.#powers.fill(0);
    this.#sum = 0;
    this.#at = 0;
    this.#count = 0;
  }
}

/**
 * A running estimate of the q-quantile of a stream of levels (dB): each value above the estimate
 * raises it by q·step, each below lowers it by (1 − q)·step, so it settles where a fraction q of
 * the values lie below it, and follows a change at about step dB per value. The first value seeds it.
 */
export class QuantileTracker {
  readonly #up: number;
  readonly #down: number;
  /** Meaningless until `known` (a field that only holds numbers is updated in place, no heap number per frame). */
  #value = 0;
  known = false;

  constructor(q: number, stepDb: number) {
    if (!(q > 0 && q < 1)) throw new RangeError("q must be in (0, 1)");
    this.#up = q * stepDb;
    this.#down = (1 - q) * stepDb;
  }

  /** The estimate, dB; −Infinity until a value has been seen. */
  get value(): number {
    return this.known ? this.#value : Number.NEGATIVE_INFINITY;
  }

  push(db: number): void {
    if (!this.known) {
      this.#value = db;
      this.known = true;
    } else if (db > this.#value) this.#value += this.#up;
    else this.#value -= this.#down;
  }

  /** Raises the estimate to `db` if it is lower (a level learned elsewhere to be this source's). */
  atLeast(db: number): void {
    if (!this.known || this.#value < db) {
      this.#value = db;
      this.known = true;
    }
  }

  /** Moves the estimate down by `db`, no lower than `floor` (a level not heard for a while fades). */
  relax(db: number, floor: number): void {
    if (this.known && this.#value > floor) this.#value = Math.max(floor, this.#value - db);
  }

  reset(): void {
    this.known = false;
    this.#value = 0;
  }

  /** Takes `other`'s estimate (a tracker of the same quantile that learned from other values). */
  copyFrom(other: QuantileTracker): void {
    this.#value = other.#value;
    this.known = other.known;
  }
}

/**
 * The lowest level of the last `windowFrames` frames, give or take a sub-window (minimum
 * statistics): under speech, which pauses, it is the noise floor; a sound that never lets up (an
 * engine, a crowd) becomes the floor itself within the window.
 */
export class MinimumTracker {
  readonly #mins: Float64Array;
  readonly #subFrames: number;
  #at = 0;
  #inSub = 0;
  #filled = 0;

  constructor(windowFrames: number, subWindows = 4) {
    this.#mins = new Float64Array(Math.max(1, subWindows)).fill(Number.POSITIVE_INFINITY);
    this.#subFrames = Math.max(1, Math.round(windowFrames / this.#mins.length));
  }

  push(db: number): void {
    const m = this.#mins;
    if (this.#inSub === 0) m[this.#at] = db;
    else if (db < m[this.#at]!) m[this.#at] = db;
    if (++this.#inSub === this.#subFrames) {
      this.#inSub = 0;
      this.#at = (this.#at + 1) % m.length;
      this.#filled = Math.min(m.length, this.#filled + 1);
    }
  }

  /** The lowest value of the window, or of what there has been of it so far, dB (+Infinity before any). */
  get lowest(): number {
    let v = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.#mins.length; i++) if (this.#mins[i]! < v) v = this.#mins[i]!;
    return v;
  }

  /** The floor, dB; −Infinity until a whole window has been heard (no floor is claimed sooner). */
  get value(): number {
    return this.#filled < this.#mins.length ? Number.NEGATIVE_INFINITY : this.lowest;
  }
}

/** The loudest level heard, fading by `fadeDb` per value since: how loud a source gets. */
export class PeakTracker {
  readonly #fade: number;
  #value = 0;
  known = false;

  constructor(fadeDb: number) {
    this.#fade = fadeDb;
  }

  /** The peak, dB; −Infinity until a value has been seen. */
  get value(): number {
    return this.known ? this.#value : Number.NEGATIVE_INFINITY;
  }

  push(db: number): void {
    if (!this.known || db > this.#value - this.#fade) {
      this.#value = this.known ? Math.max(db, this.#value - this.#fade) : db;
      this.known = true;
    } else this.#value -= this.#fade;
  }

  /** Takes `other`'s peak (a tracker that learned from other values). */
  copyFrom(other: PeakTracker): void {
    this.#value = other.#value;
    this.known = other.known;
  }
}
