// Fundamental frequency (F0) of speech by YIN (de Cheveigné & Kawahara 2002): per frame, the
// cumulative-mean-normalized difference function, the first dip under a threshold, parabolic
// refinement. Voice cloning reads a sample's pitch with it. Pure; mono float samples (±1) in, best
// low-passed (lowpass.ts) so that strong formants do not pass for the period.

export interface F0Options {
  /** Lowest and highest F0 searched, Hz. Default 60–400 (adult speech). */
  minHz?: number;
  maxHz?: number;
  /** Integration window of the difference function, ms. Default 25. */
  windowMs?: number;
  /** Hop between frames, ms. Default 10. */
  hopMs?: number;
  /** YIN threshold on the normalized difference. Default 0.15. */
  threshold?: number;
  /** Frames quieter than this (dB below the loudest frame) are not analysed. Default 30. */
  floorDb?: number;
}

export interface F0Track {
  /** Hop between frames, seconds. */
  hopSeconds: number;
  /** F0 per frame in Hz; 0 where the frame is silent or unvoiced. */
  hz: Float32Array;
  /** Frame energy in dB relative to full scale (RMS). */
  db: Float32Array;
}

export function f0Track(x: Float32Array, rate: number, opts: F0Options = {}): F0Track {
  const minHz = opts.minHz ?? 60;
  const maxHz = opts.maxHz ?? 400;
  const win = Math.round(((opts.windowMs ?? 25) * rate) / 1000);
  const hop = Math.max(1, Math.round(((opts.hopMs ?? 10) * rate) / 1000));
  const tauMin = Math.max(2, Math.floor(rate / maxHz));
  const tauMax = Math.min(win - 1, Math.ceil(rate / minHz));
  const threshold = opts.threshold ?? 0.15;
  const frames = x.length >= win + tauMax ? Math.floor((x.length - win - tauMax) / hop) + 1 : 0;
  const hz = new Float32Array(frames);
  const db = new Float32Array(frames);
  let loudest = -200;
  for (let f = 0; f < frames; f++) {
    let e = 0;
    const at = f * hop;
    for (let i = 0; i < win; i++) e += x[at + i]! * x[at + i]!;
    db[f] = 10 * Math.log10(e / win + 1e-12);
    if (db[f]! > loudest) loudest = db[f]!;
  }
  const floor = loudest - (opts.floorDb ?? 30);
  const d = new Float32Array(tauMax + 1);
  for (let f = 0; f < frames; f++) {
    if (db[f]! < floor) continue;
    const at = f * hop;
    // Difference function, then its cumulative-mean normalization (d'(0) = 1).
    let running = 0;
    let found = -1;
    for (let tau = 1; tau <= tauMax; tau++) {
      let s = 0;
      for (let i = 0; i < win; i++) {
        const v = x[at + i]! - x[at + i + tau]!;
        s += v * v;
      }
      running += s;
      d[tau] = running > 0 ? (s * tau) / running : 1;
    }
    for (let tau = tauMin; tau <= tauMax; tau++) {
      if (d[tau]! < threshold) {
        while (tau + 1 <= tauMax && d[tau + 1]! < d[tau]!) tau++;
        found = tau;
        break;
      }
    }
    if (found < 0) continue;
    // Parabolic interpolation around the dip for a sub-sample period.
    let period = found;
    if (found > 1 && found < tauMax) {
      const a = d[found - 1]!;
      const b = d[found]!;
      const c = d[found + 1]!;
      const den = a - 2 * b + c;
      if (den > 0) period = found + (a - c) / (2 * den);
    }
    hz[f] = rate / period;
  }
  return { hopSeconds: hop / rate, hz, db };
}

/** Voiced F0 values of a track, sorted ascending. */
export function voicedF0(track: F0Track): Float32Array {
  return track.hz.filter((v) => v > 0).sort();
}

/** The q-quantile (0–1) of sorted values. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = Math.min(sorted.length - 1, Math.max(0, q * (sorted.length - 1)));
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}
