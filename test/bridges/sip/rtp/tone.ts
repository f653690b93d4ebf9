// Measuring a tone in received audio: its level and its frequency, from the samples alone.

export function sine(hz: number, rate: number, samples: number, amplitude: number, phase = 0): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++)
    out[i] = Math.round(amplitude * Math.sin(phase + (2 * Math.PI * hz * i) / rate));
  return out;
}

export function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  return pcm.length === 0 ? 0 : Math.sqrt(sum / pcm.length);
}

/** Frequency from the rising zero crossings, interpolated between samples. */
export function toneHz(pcm: Int16Array, rate: number): number {
  const crossings: number[] = [];
  for (let i = 1; i < pcm.length; i++) {
    const a = pcm[i - 1]!;
    const b = pcm[i]!;
    if (a < 0 && b >= 0) crossings.push(i - 1 + -a / (b - a));
  }
  if (crossings.length < 2) return 0;
  return ((crossings.length - 1) * rate) / (crossings[crossings.length - 1]! - crossings[0]!);
}
