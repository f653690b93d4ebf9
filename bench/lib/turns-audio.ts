// Sounds for the turn-taking benchmark that espeak-ng cannot make, and level checks on the
// simulator's recordings. Everything is seeded: the same seed gives the same samples.
import { seededRandom } from "../../test/helpers/noise.ts";

export interface CoughOptions {
  durationMs: number;
  seed: number;
  /** Centre of the noise band, Hz (a cough's burst is broadband with a hump around 0.5–1.5 kHz). */
  centreHz?: number;
  /** RMS level of the whole burst, dBFS. */
  dbfs?: number;
}

/**
 * A cough-like burst: band-passed noise with a sharp attack and an exponential decay (the
 * explosive phase), plus a short voiced buzz under it (the glottal closure many coughs end on).
 * Shaped noise, not speech: Silero should score it low, but it is loud enough to open any
 * level gate, which is what makes coughs a barge-in hazard.
 */
export function cough(rate: number, o: CoughOptions): Int16Array {
  const n = Math.round((o.durationMs * rate) / 1000);
  const rand = seededRandom(o.seed);
  const fc = o.centreHz ?? 900;
  // RBJ band-pass biquad (constant skirt gain), Q ≈ 0.9: about an octave and a half wide.
  const w0 = (2 * Math.PI * fc) / rate;
  const alpha = Math.sin(w0) / (2 * 0.9);
  const a0 = 1 + alpha;
  const b0 = alpha / a0;
  const b2 = -alpha / a0;
  const a1 = (-2 * Math.cos(w0)) / a0;
  const a2 = (1 - alpha) / a0;
  let x1 = 0;
  let x2 = 0;
  let y1 = 0;
  let y2 = 0;
  const f0 = 110 + rand() * 80;
  const attack = Math.round(0.008 * rate);
  const tau = n / 4;
  const raw = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = rand() * 2 - 1;
    const y = b0 * x + b2 * x2 - a1 * y1 - a2 * y2;
    x2 = x1;
    x1 = x;
    y2 = y1;
    y1 = y;
    const env = i < attack ? i / attack : Math.exp(-(i - attack) / tau);
    const phase = ((i * f0) / rate) % 1;
    const buzz = (1 - 2 * phase) * 0.25 * Math.exp(-i / (n / 2));
    // The last 10 ms fade out so the burst does not end in a click.
    const tail = Math.min(1, (n - i) / (0.01 * rate));
    raw[i] = (y * env + buzz * env) * tail;
  }
  let sum = 0;
  for (const v of raw) sum += v * v;
  const rms = Math.sqrt(sum / Math.max(1, n));
  const gain = rms > 0 ? (32768 * 10 ** ((o.dbfs ?? -20) / 20)) / rms : 0;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(raw[i]! * gain)));
  return out;
}

/** `pcm` made `db` dB louder (or quieter), saturating. */
export function gain(pcm: Int16Array, db: number): Int16Array {
  const k = 10 ** (db / 20);
  return pcm.map((v) => Math.max(-32768, Math.min(32767, Math.round(v * k))));
}

/** How many ms of 20 ms frames within [fromMs, toMs) are louder than `dbfs` (RMS). */
export function audibleMs(pcm: Int16Array, rate: number, fromMs: number, toMs: number, dbfs = -50): number {
  let ms = 0;
  for (let t = fromMs; t < toMs; t += 20)
    if (firstAudible(pcm, rate, t, Math.min(toMs, t + 20), dbfs) !== null) ms += 20;
  return ms;
}

/** Whether any 20 ms frame of `pcm` within [fromMs, toMs) is louder than `dbfs` (RMS). */
export function audibleBetween(
  pcm: Int16Array,
  rate: number,
  fromMs: number,
  toMs: number,
  dbfs = -50,
): boolean {
  return firstAudible(pcm, rate, fromMs, toMs, dbfs) !== null;
}

/** Start (ms) of the first 20 ms frame within [fromMs, toMs) louder than `dbfs`, or null. */
export function firstAudible(
  pcm: Int16Array,
  rate: number,
  fromMs: number,
  toMs: number,
  dbfs = -50,
): number | null {
  const frame = Math.round(rate / 50);
  const limit = (32768 * 10 ** (dbfs / 20)) ** 2 * frame;
  const start = Math.max(0, Math.floor((fromMs * rate) / 1000 / frame) * frame);
  const end = Math.min(pcm.length, Math.ceil((toMs * rate) / 1000));
  for (let s = start; s < end; s += frame) {
    let e = 0;
    const stop = Math.min(pcm.length, s + frame);
    for (let i = s; i < stop; i++) e += pcm[i]! * pcm[i]!;
    if (e > limit) return (s * 1000) / rate;
  }
  return null;
}
