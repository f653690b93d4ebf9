// Speaking rate of a speech sample as syllable nuclei per second of speaking time. A nucleus is a
// peak of the smoothed loudness envelope of the low band (vowels carry it, fricatives do not) that
// rises a few dB over the dips on both sides; speaking time runs from the first to the last
// audible frame, pauses of 300 ms and more left out. Pure; low-passed float samples (±1) in.

export interface SpeechRate {
  /** Syllable nuclei counted. */
  syllables: number;
  /** Speaking time, seconds. */
  seconds: number;
  /** syllables / seconds; 0 when nothing is audible. */
  perSecond: number;
}

const HOP_S = 0.01;
const WINDOW_S = 0.03;
/** Minimum rise of a peak over the dips on both sides, dB. */
const PROMINENCE_DB = 3;
/** Frames this far under the loudest one are silence; peaks must come within it too. */
const AUDIBLE_DB = 30;
/** Peaks closer than this are one syllable. */
const MIN_GAP_S = 0.08;
const PAUSE_S = 0.3;

export function speechRate(x: Float32Array, rate: number): SpeechRate {
  const hop = Math.max(1, Math.round(HOP_S * rate));
  const win = Math.max(hop, Math.round(WINDOW_S * rate));
  const n = x.length >= win ? Math.floor((x.length - win) / hop) + 1 : 0;
  const db = new Float32Array(n);
  let loudest = -200;
  for (let f = 0; f < n; f++) {
    let e = 0;
    for (let i = f * hop; i < f * hop + win; i++) e += x[i]! * x[i]!;
    db[f] = 10 * Math.log10(e / win + 1e-12);
    loudest = Math.max(loudest, db[f]!);
  }
  const floor = loudest - AUDIBLE_DB;
  // Light smoothing (3 frames): one bump per syllable, not per frame jitter.
  const env = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const a = db[Math.max(0, i - 1)]!;
    const c = db[Math.min(n - 1, i + 1)]!;
    env[i] = (a + db[i]! + c) / 3;
  }
  const minGap = Math.round(MIN_GAP_S / HOP_S);
  let syllables = 0;
  let lastPeak = -minGap;
  let dipBefore = env[0] ?? 0;
  for (let i = 1; i + 1 < n; i++) {
    dipBefore = Math.min(dipBefore, env[i]!);
    if (!(env[i]! >= env[i - 1]! && env[i]! > env[i + 1]!)) continue;
    // The dip after: the lowest point before the envelope climbs above this peak again.
    let dipAfter = env[i]!;
    for (let j = i + 1; j < n && env[j]! <= env[i]!; j++) dipAfter = Math.min(dipAfter, env[j]!);
    const prominence = env[i]! - Math.max(dipBefore, dipAfter);
    if (prominence >= PROMINENCE_DB && env[i]! >= floor && i - lastPeak >= minGap) {
      syllables++;
      lastPeak = i;
      dipBefore = env[i]!;
    }
  }
  const pauseFrames = Math.round(PAUSE_S / HOP_S);
  let speaking = 0;
  let started = false;
  let gap = 0;
  for (let i = 0; i < n; i++) {
    if (db[i]! >= floor) {
      if (started && gap < pauseFrames) speaking += gap;
      started = true;
      speaking++;
      gap = 0;
    } else if (started) {
      gap++;
    }
  }
  const seconds = speaking * HOP_S;
  return { syllables, seconds, perSecond: seconds > 0 ? syllables / seconds : 0 };
}
