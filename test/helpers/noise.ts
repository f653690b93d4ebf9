// Seeded noise for tests: the same seed gives the same samples on every run and machine.

/** mulberry32: a tiny, well-mixed 32-bit PRNG; returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` bytes from seededRandom(seed): stand-in audio or payloads, the same on every run. */
export function seededBytes(n: number, seed: number): Uint8Array {
  const rand = seededRandom(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(rand() * 256));
}

export type NoiseColor = "white" | "pink";

export interface NoiseOptions {
  /** RMS level of the result in dBFS (full scale = 32768). */
  dbfs: number;
  seed: number;
  color?: NoiseColor;
}

/** `ms` of noise at `rate`, scaled so its RMS level is exactly `dbfs`. */
export function noise(ms: number, rate: number, options: NoiseOptions): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const rand = seededRandom(options.seed);
  const raw = new Float64Array(n);
  // Paul Kellet's economy pink filter: three one-pole sections approximating -3 dB/octave.
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  for (let i = 0; i < n; i++) {
    const white = rand() * 2 - 1;
    if (options.color === "pink") {
      b0 = 0.99765 * b0 + white * 0.099046;
      b1 = 0.963 * b1 + white * 0.2965164;
      b2 = 0.57 * b2 + white * 1.0526913;
      raw[i] = b0 + b1 + b2 + white * 0.1848;
    } else {
      raw[i] = white;
    }
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += raw[i]! * raw[i]!;
  const rms = Math.sqrt(sum / Math.max(1, n));
  const gain = rms > 0 ? (32768 * 10 ** (options.dbfs / 20)) / rms : 0;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(raw[i]! * gain)));
  return out;
}
