// Steady single tones in PCM (a voicemail's beep): a Goertzel filter bank from 400 to 2,100 Hz
// over each 20 ms frame, the frame counted as tonal when one filter holds most of the frame's
// energy (speech spreads its energy over harmonics and formants; a beep puts it in one place),
// and a tone when tonal frames at the same pitch last long enough. Pure code, no I/O.

/** Lowest and highest beep pitch looked for, Hz (voicemail beeps are 440–2,100 Hz, most near 1 kHz). */
export const TONE_MIN_HZ = 400;
export const TONE_MAX_HZ = 2100;
/** Filter spacing, Hz: a tone between two filters still puts ~80 % of its energy in the nearer. */
const STEP_HZ = 25;

export interface FrameTone {
  /** The strongest filter's frequency, Hz. */
  readonly hz: number;
  /** Share of the frame's energy at that frequency, 0–1 (a pure tone ≈ 1, speech well below 0.5). */
  readonly purity: number;
  /** Frame RMS, in Int16 units. */
  readonly rms: number;
}

/** Share of a window's energy at `hz` (one Goertzel filter), 0–1: a pure tone at `hz` ≈ 1. */
export function toneShare(pcm: Int16Array, hz: number, sampleRate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
  let s1 = 0;
  let s2 = 0;
  let energy = 0;
  for (const v of pcm) {
    const s = v + k * s1 - s2;
    s2 = s1;
    s1 = s;
    energy += v * v;
  }
  const power = s1 * s1 + s2 * s2 - k * s1 * s2;
  return energy === 0 ? 0 : (2 * power) / (pcm.length * energy);
}

/** A Goertzel filter bank for one sample rate and frame length (coefficients computed once). */
export class ToneBank {
  readonly #coefs: Float64Array;
  readonly #freqs: Float64Array;

  constructor(sampleRate: number) {
    const n = Math.floor((TONE_MAX_HZ - TONE_MIN_HZ) / STEP_HZ) + 1;
    this.#coefs = new Float64Array(n);
    this.#freqs = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const hz = TONE_MIN_HZ + i * STEP_HZ;
      this.#freqs[i] = hz;
      this.#coefs[i] = 2 * Math.cos((2 * Math.PI * hz) / sampleRate);
    }
  }

  /** The strongest tone of one frame and how pure it is. */
  analyse(frame: Int16Array): FrameTone {
    const n = frame.length;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += frame[i]! * frame[i]!;
    const rms = n > 0 ? Math.sqrt(energy / n) : 0;
    if (energy === 0) return { hz: 0, purity: 0, rms: 0 };
    let best = 0;
    let bestHz = 0;
    for (let k = 0; k < this.#coefs.length; k++) {
      const c = this.#coefs[k]!;
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const s0 = frame[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      const power = s1 * s1 + s2 * s2 - c * s1 * s2;
      if (power > best) {
        best = power;
        bestHz = this.#freqs[k]!;
      }
    }
    // A sinusoid of amplitude A over n samples: power ≈ (A·n/2)², energy = A²·n/2, so this is ≈ 1.
    return { hz: bestHz, purity: Math.min(1, (2 * best) / (n * energy)), rms };
  }
}

export interface ToneTrackerOptions {
  readonly sampleRate: number;
  /** Shortest tone reported, ms (default 150). */
  readonly minMs?: number;
  /** Purity a frame needs to count as tonal (default 0.6). */
  readonly minPurity?: number;
  /** Quietest tone, RMS in Int16 units (default 150, about −47 dBFS). */
  readonly minRms?: number;
}

export interface DetectedTone {
  readonly hz: number;
  /** Start and end on the frames' timeline, ms. */
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Follows frames in order and reports each tone once it has ended (a beep is over when the
 * message may start). Frames are 20 ms, or whatever length they come in (`frameMs`).
 */
export class ToneTracker {
  readonly #bank: ToneBank;
  readonly #minMs: number;
  readonly #minPurity: number;
  readonly #minRms: number;
  #runHz = 0;
  #runStart = -1;
  #runEnd = 0;
  /** The tone under way is already long enough to be one (its end is awaited). */
  #long = false;

  constructor(o: ToneTrackerOptions) {
    this.#bank = new ToneBank(o.sampleRate);
    this.#minMs = o.minMs ?? 150;
    this.#minPurity = o.minPurity ?? 0.6;
    this.#minRms = o.minRms ?? 150;
  }

  /** The last frame's analysis (callers tell tones from speech with it). */
  last: FrameTone = { hz: 0, purity: 0, rms: 0 };

  /** Whether the last frame counted as tonal. */
  get tonal(): boolean {
    return this.last.rms >= this.#minRms && this.last.purity >= this.#minPurity;
  }

  /** Where the tonal run under way began on the frames' timeline (-1 when none is). */
  get runStartMs(): number {
    return this.#runStart;
  }

  /** A steady tone long enough is sounding now (its end not yet heard). */
  get sounding(): boolean {
    return this.#long;
  }

  /** One frame starting at `atMs`; the tone that ended with it, if one did. */
  push(frame: Int16Array, atMs: number, frameMs: number): DetectedTone | undefined {
    const t = this.#bank.analyse(frame);
    this.last = t;
    const tonal = this.tonal;
    // The same pitch within two filters: a beep's pitch is steady, speech's moves.
    if (tonal && this.#runStart >= 0 && Math.abs(t.hz - this.#runHz) <= 2 * STEP_HZ) {
      this.#runEnd = atMs + frameMs;
      if (this.#runEnd - this.#runStart >= this.#minMs) this.#long = true;
      return undefined;
    }
    const ended =
      this.#long && this.#runStart >= 0
        ? { hz: this.#runHz, startMs: this.#runStart, endMs: this.#runEnd }
        : undefined;
    this.#long = false;
    if (tonal) {
      this.#runHz = t.hz;
      this.#runStart = atMs;
      this.#runEnd = atMs + frameMs;
    } else this.#runStart = -1;
    return ended;
  }
}
