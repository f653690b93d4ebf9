// The median pitch of voiced speech (autocorrelation over 40 ms windows), to tell one voice from
// another in what a caller heard: espeak-ng's male voices sit near 100-130 Hz, its female ones
// well above 180 Hz.

export function medianPitchHz(pcm: Int16Array, rate: number): number | undefined {
  const win = Math.round(rate * 0.04);
  const minLag = Math.floor(rate / 400);
  const maxLag = Math.ceil(rate / 70);
  const pitches: number[] = [];
  for (let start = 0; start + win + maxLag < pcm.length; start += win) {
    let energy = 0;
    for (let i = 0; i < win; i++) energy += pcm[start + i]! * pcm[start + i]!;
    if (Math.sqrt(energy / win) < 500) continue; // silence or near it
    let best = 0;
    let bestLag = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      let e2 = 0;
      for (let i = 0; i < win; i++) {
        sum += pcm[start + i]! * pcm[start + i + lag]!;
        e2 += pcm[start + i + lag]! * pcm[start + i + lag]!;
      }
      const r = sum / Math.sqrt(energy * e2 + 1);
      if (r > best) {
        best = r;
        bestLag = lag;
      }
    }
    if (best > 0.6 && bestLag > 0) pitches.push(rate / bestLag);
  }
  if (pitches.length < 5) return undefined;
  pitches.sort((a, b) => a - b);
  return pitches[Math.floor(pitches.length / 2)];
}
