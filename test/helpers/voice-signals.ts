// Voice-like signals of known level for tests of level tracking: a buzz of harmonics (a voice's
// pitch and its overtones) whose loudness rises and falls at a syllable rate, with pauses between
// words, so its short-term level swings as speech does. Seeded: the same seed, the same samples.
import { seededRandom } from "./noise.ts";

export interface VoiceSignalOptions {
  rate: number;
  ms: number;
  /** RMS level of the sounding part, dBFS. */
  dbfs: number;
  /** Pitch, Hz (a talker's voice: 90–250). */
  f0: number;
  seed: number;
  /** Syllables per second. Default 4. */
  syllableRate?: number;
  /** Share of the time spent in pauses between words, 0–1. Default 0.2. */
  pauseShare?: number;
}

/** A voice-like signal: syllables of harmonics with pauses between words. */
export function voiceSignal(o: VoiceSignalOptions): Int16Array {
  const n = Math.round((o.ms * o.rate) / 1000);
  const rand = seededRandom(o.seed);
  const syl = o.syllableRate ?? 4;
  const pauseShare = o.pauseShare ?? 0.2;
  const raw = new Float64Array(n);
  let phase = 0;
  // Words of 2–4 syllables; after each, a pause whose length keeps the pause share.
  let wordLeft = 0;
  let pauseLeft = 0;
  let sumSq = 0;
  let sounding = 0;
  for (let i = 0; i < n; i++) {
    if (wordLeft <= 0 && pauseLeft <= 0) {
      wordLeft = Math.round(((2 + Math.floor(rand() * 3)) / syl) * o.rate);
      pauseLeft = Math.round(((wordLeft * pauseShare) / (1 - pauseShare)) * (0.5 + rand()));
    }
    if (wordLeft > 0) {
      wordLeft--;
      const t = i / o.rate;
      // Pitch wanders ±10 % slowly, as intonation does.
      const f = o.f0 * (1 + 0.1 * Math.sin(2 * Math.PI * 0.7 * t));
      phase += (2 * Math.PI * f) / o.rate;
      let v = 0;
      for (let h = 1; h <= 12 && f * h < o.rate / 2; h++) v += Math.sin(h * phase) / h;
      const env = 0.15 + 0.85 * Math.abs(Math.sin(Math.PI * syl * t)) ** 1.5;
      raw[i] = v * env;
      sumSq += raw[i]! * raw[i]!;
      sounding++;
    } else {
      pauseLeft--;
    }
  }
  const rms = Math.sqrt(sumSq / Math.max(1, sounding));
  const gain = rms > 0 ? (32768 * 10 ** (o.dbfs / 20)) / rms : 0;
  return Int16Array.from(raw, (v) => Math.max(-32768, Math.min(32767, Math.round(v * gain))));
}

/**
 * An engine's drone: the harmonics of `f0` (Hz) at one loudness throughout, `ms` long, with a
 * period as a voice has but no syllables.
 */
export function droneSignal(o: { rate: number; ms: number; f0: number }): Int16Array {
  const n = Math.round((o.ms * o.rate) / 1000);
  return Int16Array.from({ length: n }, (_, i) => {
    let v = 0;
    for (let h = 1; h <= 12; h++) v += Math.sin((2 * Math.PI * o.f0 * h * i) / o.rate) / h;
    return Math.round(v * 2000);
  });
}

/** The sum of `parts`, each laid from its offset (samples), as long as the longest reaches. */
export function mixAt(parts: ReadonlyArray<{ pcm: Int16Array; at?: number }>): Int16Array {
  const n = Math.max(0, ...parts.map((p) => (p.at ?? 0) + p.pcm.length));
  const sum = new Float64Array(n);
  for (const { pcm, at = 0 } of parts) for (let i = 0; i < pcm.length; i++) sum[at + i]! += pcm[i]!;
  return Int16Array.from(sum, (v) => Math.max(-32768, Math.min(32767, Math.round(v))));
}
