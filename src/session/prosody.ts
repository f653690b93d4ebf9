// Pitch and loudness at the end of an utterance: how a speaker's voice ends says something
// about whether they are done (a final fall and fading level at the end of a statement, a
// held or rising pitch where the sentence goes on). Computed once per utterance end on the
// last stretch of its audio: a YIN pitch track at 8 kHz (codecs/pitch.ts), 10 ms hops.
import {
  halfRate,
  MAX_LAG,
  PITCH_RATE,
  semitones,
  YIN_WINDOW as WINDOW,
  yinPeriod,
} from "../../codecs/pitch.ts";

export interface EndProsody {
  /** Pitch slope over the last 300 ms of voicing, semitones per second (negative: falling). */
  f0SlopeStPerS: number;
  /** Pitch at the end of voicing against the speaker's median in this stretch, semitones. */
  f0EndSt: number;
  /** Level of the last voiced frames against the stretch's loud level (its 90th percentile), dB. */
  levelEndDb: number;
  /** Voiced frames the figures rest on. */
  voicedFrames: number;
}

const HOP = 80; // 10 ms
/** Frames quieter than the loudest by this much are not looked at for pitch. */
const QUIET_DB = 35;
const TAIL_MS = 300;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/**
 * The end prosody of `pcm` (16 kHz mono, ending where the speech ended), or undefined when too
 * little of it is voiced to say.
 */
export function endProsody(pcm: Int16Array): EndProsody | undefined {
  const x = halfRate(pcm);
  const frames = Math.floor((x.length - WINDOW - MAX_LAG) / HOP);
  if (frames < 5) return undefined;
  const level = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let e = 0;
    for (let j = f * HOP; j < f * HOP + WINDOW + MAX_LAG; j++) e += x[j]! * x[j]!;
    level[f] = 10 * Math.log10(e / (WINDOW + MAX_LAG) + 1e-9);
  }
  const loudest = Math.max(...level);
  const d = new Float32Array(MAX_LAG + 1);
  const voiced: Array<{ f: number; st: number }> = [];
  for (let f = 0; f < frames; f++) {
    if (level[f]! < loudest - QUIET_DB) continue;
    const period = yinPeriod(x, f * HOP, d);
    if (period > 0) voiced.push({ f, st: semitones(PITCH_RATE / period) });
  }
  if (voiced.length < 5) return undefined;
  // Octave errors: a frame more than 7 semitones off its neighbours' median takes that median.
  const st = voiced.map((v, i) => {
    const near = voiced.slice(Math.max(0, i - 2), i + 3).map((n) => n.st);
    const m = median(near);
    return Math.abs(v.st - m) > 7 ? m : v.st;
  });
  const last = voiced.at(-1)!.f;
  const tail = voiced.flatMap((v, i) => (last - v.f <= TAIL_MS / 10 ? [{ t: v.f / 100, st: st[i]! }] : []));
  let slope = 0;
  if (tail.length >= 3) {
    const mt = tail.reduce((s, p) => s + p.t, 0) / tail.length;
    const ms = tail.reduce((s, p) => s + p.st, 0) / tail.length;
    let num = 0;
    let den = 0;
    for (const p of tail) {
      num += (p.t - mt) * (p.st - ms);
      den += (p.t - mt) ** 2;
    }
    slope = den > 0 ? num / den : 0;
  }
  const endSt = st.slice(-3).reduce((s, v) => s + v, 0) / Math.min(3, st.length);
  const sortedLevel = [...level].sort((a, b) => a - b);
  const loud = sortedLevel[Math.floor(0.9 * (sortedLevel.length - 1))]!;
  const endLevel = voiced.slice(-5).reduce((s, v) => s + level[v.f]!, 0) / Math.min(5, voiced.length);
  return {
    f0SlopeStPerS: slope,
    f0EndSt: endSt - median(st),
    levelEndDb: endLevel - loud,
    voicedFrames: voiced.length,
  };
}
