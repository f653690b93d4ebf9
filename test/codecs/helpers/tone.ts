// Analytic test signals and an exact measurement of a tone in a signal.

/** amplitude · sin(2π·freq·i/rate + phase), rounded to Int16. */
export function tone(samples: number, rate: number, freq: number, amplitude: number, phase = 0): Int16Array {
  const out = new Int16Array(samples);
  const w = (2 * Math.PI * freq) / rate;
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin(w * i + phase));
  return out;
}

export interface ToneFit {
  /** Amplitude of the fitted sinusoid. */
  amplitude: number;
  /** Its phase relative to sin(2π·freq·i/rate), radians in (-π, π]. */
  phase: number;
  /** RMS of what is left once the sinusoid and DC are removed. */
  residualRms: number;
}

/**
 * Least-squares fit of a·sin + b·cos + c at a known frequency over samples [from, to): exact for
 * any window length (no leakage), so the residual is everything that is not that tone.
 */
export function fitTone(x: Int16Array, rate: number, freq: number, from: number, to: number): ToneFit {
  const w = (2 * Math.PI * freq) / rate;
  // Normal equations for the basis (sin, cos, 1).
  const A = [
    [0, 0, 0],
    [0, 0, 0],
    [0, 0, 0],
  ];
  const y = [0, 0, 0];
  for (let i = from; i < to; i++) {
    const v = [Math.sin(w * i), Math.cos(w * i), 1];
    for (let r = 0; r < 3; r++) {
      y[r]! += v[r]! * x[i]!;
      for (let c = 0; c < 3; c++) A[r]![c]! += v[r]! * v[c]!;
    }
  }
  const [a, b, c] = solve3(A, y);
  let res = 0;
  for (let i = from; i < to; i++) {
    const e = x[i]! - (a * Math.sin(w * i) + b * Math.cos(w * i) + c);
    res += e * e;
  }
  return { amplitude: Math.hypot(a, b), phase: Math.atan2(b, a), residualRms: Math.sqrt(res / (to - from)) };
}

function solve3(A: number[][], y: number[]): [number, number, number] {
  // Gaussian elimination with partial pivoting on a 3×3 system.
  const m = A.map((row, r) => [...row, y[r]!]);
  for (let col = 0; col < 3; col++) {
    let piv = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[piv]![col]!)) piv = r;
    [m[col], m[piv]] = [m[piv]!, m[col]!];
    for (let r = 0; r < 3; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      for (let c = col; c < 4; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  return [m[0]![3]! / m[0]![0]!, m[1]![3]! / m[1]![1]!, m[2]![3]! / m[2]![2]!];
}

/** RMS of x over [from, to). */
export function rms(x: Int16Array, from = 0, to = x.length): number {
  let s = 0;
  for (let i = from; i < to; i++) s += x[i]! * x[i]!;
  return Math.sqrt(s / Math.max(1, to - from));
}

export const db = (ratio: number): number => 20 * Math.log10(ratio);
