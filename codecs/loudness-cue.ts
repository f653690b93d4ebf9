// A level cue for placing speech boundaries: is this window clearly louder than the background noise?
//
// Each window is measured twice: its plain level, and its level after pre-emphasis
// (y[n] = x[n] − 0.9·x[n−1]). Noise with its power in the low frequencies (pink-ish, like most
// everyday noise) wanders by ±3 dB from one 32 ms window to the next, which hides weak sounds; once
// emphasised it is nearly white and steady to ±0.3 dB. White-ish noise (hiss) is steady as it is, and
// emphasis would only bury the low, voiced sounds (nasals, vowels) under its boosted highs. So both
// levels keep their own noise statistics — mean and spread in dB, learned from windows judged to be
// non-speech — and a window is loud when either level stands out from its noise by more than
// max(marginDb, SPREADS × its spread): the steadier measurement decides.

const EMPHASIS = 0.9;
/** How many standard deviations of the noise level a window must exceed. */
const SPREADS = 3;
/** Largest rise of a noise mean per window: one misjudged window cannot lift it over weak speech. */
const MAX_RISE_DB = 0.5;

export interface LoudnessCueOptions {
  /** Window length, for the averaging time constant. */
  windowMs: number;
  /** Smallest margin above the noise mean (dB) for a window to count as loud. Default 1. */
  marginDb?: number;
  /** How fast the noise statistics follow a change of noise. Default 500 ms. */
  timeConstantMs?: number;
}

/** Plain and emphasised power of one window (full scale = 1). */
export interface WindowPower {
  plain: number;
  emphasised: number;
}

class NoiseStats {
  /** Meaningless until `learned`: a field that only ever holds numbers is updated in place, while one that also holds null gets a new heap number per update (each window). */
  #mean = 0;
  learned = false;
  variance = 1;

  get mean(): number | null {
    return this.learned ? this.#mean : null;
  }

  learn(db: number, alpha: number): void {
    if (!this.learned) {
      this.#mean = db;
      this.learned = true;
      return;
    }
    const d = db - this.#mean;
    this.#mean += Math.min(alpha * d, MAX_RISE_DB);
    this.variance += alpha * (Math.min(d * d, 100) - this.variance);
  }

  exceeds(db: number, marginDb: number): boolean {
    return this.learned && db > this.#mean + Math.max(marginDb, SPREADS * Math.sqrt(this.variance));
  }
}

export class LoudnessCue {
  readonly marginDb: number;
  private readonly alpha: number;
  private plain = new NoiseStats();
  private emphasised = new NoiseStats();
  private last = 0;

  constructor(options: LoudnessCueOptions) {
    this.marginDb = options.marginDb ?? 1;
    this.alpha = Math.min(1, options.windowMs / (options.timeConstantMs ?? 500));
  }

  /** Noise mean of the plain level in dBFS; null until a non-speech window has been learned. */
  get noiseDb(): number | null {
    return this.plain.mean;
  }

  /**
   * Measures a window; windows must be given in stream order (emphasis spans their boundary).
   * With `out`, the result is written there (one object per stream instead of one per window).
   */
  measure(window: Int16Array, out?: WindowPower): WindowPower {
    let prev = this.last;
    let plain = 0;
    let emphasised = 0;
    for (let i = 0; i < window.length; i++) {
      const x = window[i]!;
      const y = x - EMPHASIS * prev;
      plain += x * x;
      emphasised += y * y;
      prev = x;
    }
    this.last = prev;
    const scale = Math.max(1, window.length) * 32768 * 32768;
    if (!out) return { plain: plain / scale, emphasised: emphasised / scale };
    out.plain = plain / scale;
    out.emphasised = emphasised / scale;
    return out;
  }

  /** Whether a measured window stands out from the noise; with no noise learned yet, any sound does. */
  isLoud(power: WindowPower): boolean {
    if (!this.plain.learned) return power.plain > 0;
    return (
      this.plain.exceeds(toDb(power.plain), this.marginDb) ||
      this.emphasised.exceeds(toDb(power.emphasised), this.marginDb)
    );
  }

  /** Learns from a window judged to hold no speech. */
  learnNoise(power: WindowPower): void {
    this.plain.learn(toDb(power.plain), this.alpha);
    this.emphasised.learn(toDb(power.emphasised), this.alpha);
  }

  reset(): void {
    this.plain = new NoiseStats();
    this.emphasised = new NoiseStats();
    this.last = 0;
  }
}

function toDb(power: number): number {
  return 10 * Math.log10(Math.max(power, 1e-12));
}
