// A voice's pitch: YIN (de Cheveigné and Kawahara, 2002) at 8 kHz, the telephone band, for
// voices from 60 to 400 Hz. Used on an utterance's last stretch (src/session/prosody.ts) and
// frame by frame, to tell one voice from another (src/session/caller-voice.ts).

/** The rate YIN runs at, Hz. */
export const PITCH_RATE = 8000;
/** YIN's integration window, samples (15 ms). */
export const YIN_WINDOW = 120;
/** The shortest period looked for (400 Hz) and the longest (60 Hz), samples. */
const MIN_LAG = 20;
export const MAX_LAG = 133;
const YIN_THRESHOLD = 0.2;
/** A 20 ms frame at PITCH_RATE, samples. */
const FRAME = PITCH_RATE / 50;

/** Half-rate audio by averaging sample pairs (enough low-pass for pitch below 400 Hz). */
export function halfRate(pcm: Int16Array, out = new Float32Array(pcm.length >> 1)): Float32Array {
  for (let i = 0; i < out.length; i++) out[i] = (pcm[2 * i]! + pcm[2 * i + 1]!) / 2;
  return out;
}

/**
 * YIN's period at `start` of `x` (8 kHz; it needs YIN_WINDOW + MAX_LAG samples from there), in
 * samples, or 0 when unvoiced. `d` is scratch of MAX_LAG + 1.
 */
export function yinPeriod(x: Float32Array, start: number, d: Float32Array): number {
  let running = 0;
  // The first lag under the threshold, then on while the next is lower: the difference function
  // is computed only as far as that (for a voice at 150 Hz, 55 lags of 133).
  let best = 0;
  for (let tau = 1; tau <= MAX_LAG; tau++) {
    let sum = 0;
    for (let j = start; j < start + YIN_WINDOW; j++) {
      const diff = x[j]! - x[j + tau]!;
      sum += diff * diff;
    }
    running += sum;
    d[tau] = running > 0 ? (sum * tau) / running : 1;
    // d[tau - 1]'s right-hand neighbour is known now.
    const c = tau - 1;
    if (c < MIN_LAG) continue;
    if (best === 0) {
      if (d[c]! >= YIN_THRESHOLD) continue;
      best = c;
    }
    if (tau < MAX_LAG && d[tau]! < d[best]!) best = tau;
    else break;
  }
  if (best === 0) return 0;
  // Parabolic interpolation around the minimum.
  const a = d[best - 1]!;
  const b = d[best]!;
  const c = d[best + 1]!;
  const den = a - 2 * b + c;
  return den > 0 ? best + (a - c) / (2 * den) : best;
}

/** A pitch in semitones above 100 Hz. */
export const semitones = (hz: number): number => 12 * Math.log2(hz / 100);

/**
 * The pitch of each 20 ms frame of 8 or 16 kHz audio, from it and the frame before (YIN needs more
 * than one frame's worth). Allocates nothing per frame.
 */
export class FramePitch {
  /** The last two frames at 8 kHz. */
  readonly #x = new Float32Array(2 * FRAME);
  readonly #d = new Float32Array(MAX_LAG + 1);
  readonly #half = new Float32Array(FRAME);
  /** YIN's lowest difference in the last frame found unvoiced (lowestDifference). */
  #lowest = 0;

  /** Takes a 20 ms frame at 8 or 16 kHz (others leave the pitch unvoiced). */
  push(pcm: Int16Array, rate: number): void {
    this.#x.copyWithin(0, FRAME);
    if (rate === 2 * PITCH_RATE && pcm.length === 2 * FRAME) this.#x.set(halfRate(pcm, this.#half), FRAME);
    else if (rate === PITCH_RATE && pcm.length === FRAME) this.#x.set(pcm, FRAME);
    else this.#x.fill(0, FRAME);
  }

  /**
   * How near to periodic the last frame came where pitch() found it unvoiced: YIN's lowest
   * normalized difference over the lags looked at (0 periodic; white noise ~1). 0 when voiced.
   */
  get lowestDifference(): number {
    return this.#lowest;
  }

  /** The pitch of the last frame pushed (with the one before it), semitones; NaN when unvoiced. */
  pitch(): number {
    const d = this.#d;
    const period = yinPeriod(this.#x, this.#x.length - YIN_WINDOW - MAX_LAG, d);
    if (period > 0) {
      this.#lowest = 0;
      return semitones(PITCH_RATE / period);
    }
    // Unvoiced: yinPeriod went through every lag.
    let lowest = 1;
    for (let tau = MIN_LAG; tau <= MAX_LAG; tau++) if (d[tau]! < lowest) lowest = d[tau]!;
    this.#lowest = lowest;
    return Number.NaN;
  }
}
