// Two-channel recordings in tests: interleaved 16-bit stereo split into its channels.

/** Left and right channels of interleaved stereo (L, R, L, R, …). */
export function splitStereo(stereo: Int16Array): { left: Int16Array; right: Int16Array } {
  const n = stereo.length >> 1;
  const left = new Int16Array(n);
  const right = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    left[i] = stereo[2 * i]!;
    right[i] = stereo[2 * i + 1]!;
  }
  return { left, right };
}
