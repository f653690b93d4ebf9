// A 4th-order Butterworth-like low-pass (two cascaded biquads, RBJ cookbook) over 16-bit PCM. Speech
// analysis keeps the band of voicing and vowels: it steadies pitch tracking and makes vowels, not
// fricatives, the peaks of the loudness envelope. Pure.

export function lowpass(pcm: Int16Array, rate: number, cutoffHz: number): Float32Array {
  const w = (2 * Math.PI * cutoffHz) / rate;
  const alpha = Math.sin(w) / (2 * Math.SQRT1_2);
  const cw = Math.cos(w);
  const norm = 1 + alpha;
  const b0 = (1 - cw) / 2 / norm;
  const b1 = (1 - cw) / norm;
  const a1 = (-2 * cw) / norm;
  const a2 = (1 - alpha) / norm;
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = pcm[i]! / 32768;
  for (let pass = 0; pass < 2; pass++) {
    let x1 = 0;
    let x2 = 0;
    let y1 = 0;
    let y2 = 0;
    for (let i = 0; i < out.length; i++) {
      const x = out[i]!;
      const y = b0 * x + b1 * x1 + b0 * x2 - a1 * y1 - a2 * y2;
      x2 = x1;
      x1 = x;
      y2 = y1;
      y1 = y;
      out[i] = y;
    }
  }
  return out;
}
