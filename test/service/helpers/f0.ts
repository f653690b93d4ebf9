// Pitch of test audio by plain normalized autocorrelation: per 40 ms frame (10 ms hop) of the
// loud part, the shortest lag in 60–400 Hz whose normalized autocorrelation peak comes within 10%
// of the best one, kept when the frame is clearly periodic (best r > 0.5); the median over frames.
// Deliberately a different method from the service's YIN (src/service/engines/tts/clone/f0.ts), so
// the tests do not grade it with itself.

export function medianF0(pcm: Int16Array, rate: number): number {
  const win = Math.round(0.04 * rate);
  const hop = Math.round(0.01 * rate);
  const minLag = Math.floor(rate / 400);
  const maxLag = Math.ceil(rate / 60);
  const x = Float64Array.from(pcm, (v) => v / 32768);
  const energies: number[] = [];
  for (let at = 0; at + win + maxLag <= x.length; at += hop) {
    let e = 0;
    for (let i = 0; i < win; i++) e += x[at + i]! * x[at + i]!;
    energies.push(e);
  }
  const loudest = Math.max(...energies);
  const found: number[] = [];
  energies.forEach((e0, f) => {
    if (e0 < loudest * 0.01) return; // 20 dB under the loudest frame
    const at = f * hop;
    const r = new Float64Array(maxLag + 2);
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let num = 0;
      let e1 = 0;
      for (let i = 0; i < win; i++) {
        num += x[at + i]! * x[at + i + lag]!;
        e1 += x[at + i + lag]! * x[at + i + lag]!;
      }
      r[lag] = num / Math.sqrt(e0 * e1 + 1e-20);
      best = Math.max(best, r[lag]!);
    }
    if (best <= 0.5) return;
    // Multiples of the period correlate almost as well: take the first peak near the best one.
    for (let lag = minLag + 1; lag < maxLag; lag++) {
      if (r[lag]! >= 0.9 * best && r[lag]! >= r[lag - 1]! && r[lag]! >= r[lag + 1]!) {
        found.push(rate / lag);
        return;
      }
    }
  });
  found.sort((a, b) => a - b);
  if (found.length === 0) return Number.NaN;
  return found[Math.floor(found.length / 2)]!;
}
