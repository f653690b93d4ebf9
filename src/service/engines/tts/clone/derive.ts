// Voice cloning for the formant synthesizer: a speech sample's pitch (median F0), pitch spread and
// speaking rate become espeak-ng parameters (variant, pitch, range, words per minute), so that the
// engine speaks near the sample's pitch and pace. This is not timbre cloning: espeak-ng has no way
// to take a voice's colour from a recording; docs/local-service.md says so.
//
// The tables map espeak-ng parameters to what the analysis below measures on espeak-ng's own
// speech (two sentences, worker output at 22050 Hz resampled to 8 kHz, low-passed at 1 kHz), so a
// sample spoken at F0 x is answered with the parameter that makes the engine speak at x.
import type { EngineVoice } from "../voices.ts";
import { f0Track, quantile, voicedF0 } from "./f0.ts";
import { lowpass } from "./lowpass.ts";
import { speechRate } from "./speech-rate.ts";

/** Rate the analysis runs at (decode samples to it). */
export const CLONE_ANALYSIS_RATE = 8000;

const PITCH_STEPS = [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100];
/** Median F0 (Hz) at each PITCH_STEPS value, per espeak-ng variant. */
const F0_BY_PITCH: Readonly<Record<"male" | "female", { espeak: string; hz: number[] }>> = {
  male: { espeak: "en-us", hz: [68.9, 73.3, 78.4, 85.3, 92, 101.4, 112.3, 124, 138, 153.8, 170] },
  female: {
    espeak: "en-us+f3",
    hz: [148.1, 158.1, 168.2, 180.1, 193.3, 211, 230.3, 252.7, 278.1, 307.8, 336.9],
  },
};
/** Above this median F0 the female variant (its formants too) is the closer voice. */
const FEMALE_FROM_HZ = 160;

const RANGE_STEPS = [0, 25, 50, 75, 100];
/** F0 spread, 10th to 90th percentile in semitones, at each RANGE_STEPS value. */
const SPREAD_BY_RANGE = [0.27, 2.27, 3.91, 5.04, 5.97];

const WPM_STEPS = [100, 140, 170, 220, 280];
/** Syllable nuclei per second of speaking time at each WPM_STEPS value. */
const SYLLABLES_BY_WPM = [3.24, 4.27, 4.79, 5.9, 6.73];
const WPM_MIN = 90;
const WPM_MAX = 320;

/** At least this much voiced speech, seconds, and this many syllables, or the sample is refused. */
const MIN_VOICED_S = 0.5;
const MIN_SYLLABLES = 3;

export interface SampleAnalysis {
  /** Median F0, Hz. */
  f0Hz: number;
  /** 10th–90th percentile F0 spread, semitones. */
  spreadSemitones: number;
  syllablesPerSecond: number;
  /** Voiced speech found, seconds. */
  voicedSeconds: number;
}

export interface ClonedVoiceParams {
  sample: SampleAnalysis;
  voice: EngineVoice;
}

export class CloneError extends Error {
  override name = "CloneError";
}

/** Piecewise-linear y(x) through the points (xs ascending), extended linearly past both ends. */
function interpolate(xs: readonly number[], ys: readonly number[], x: number): number {
  let i = 1;
  while (i < xs.length - 1 && x > xs[i]!) i++;
  const x0 = xs[i - 1]!;
  const x1 = xs[i]!;
  return ys[i - 1]! + ((ys[i]! - ys[i - 1]!) * (x - x0)) / (x1 - x0);
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** Measures a sample (mono PCM at CLONE_ANALYSIS_RATE). Throws CloneError when it holds no speech. */
export function analyseSample(pcm: Int16Array, rate = CLONE_ANALYSIS_RATE): SampleAnalysis {
  const x = lowpass(pcm, rate, 1000);
  const track = f0Track(x, rate);
  const f0 = voicedF0(track);
  const voicedSeconds = f0.length * track.hopSeconds;
  if (voicedSeconds < MIN_VOICED_S) {
    throw new CloneError(
      `no voiced speech found (${voicedSeconds.toFixed(2)} s voiced); the sample must be someone speaking`,
    );
  }
  const rateOf = speechRate(x, rate);
  if (rateOf.syllables < MIN_SYLLABLES) {
    throw new CloneError(
      `no speech rhythm found (${rateOf.syllables} syllables); the sample must be someone speaking`,
    );
  }
  return {
    f0Hz: quantile(f0, 0.5),
    spreadSemitones: 12 * Math.log2(quantile(f0, 0.9) / quantile(f0, 0.1)),
    syllablesPerSecond: rateOf.perSecond,
    voicedSeconds,
  };
}

/** espeak-ng parameters that speak at the analysed pitch, spread and pace. */
export function voiceFromAnalysis(a: SampleAnalysis): EngineVoice {
  const table = a.f0Hz >= FEMALE_FROM_HZ ? F0_BY_PITCH.female : F0_BY_PITCH.male;
  const logHz = table.hz.map((h) => Math.log(h));
  const pitch = Math.round(clamp(interpolate(logHz, PITCH_STEPS, Math.log(a.f0Hz)), 0, 100));
  const range = Math.round(clamp(interpolate(SPREAD_BY_RANGE, RANGE_STEPS, a.spreadSemitones), 0, 100));
  const wpm = Math.round(
    clamp(interpolate(SYLLABLES_BY_WPM, WPM_STEPS, a.syllablesPerSecond), WPM_MIN, WPM_MAX),
  );
  return { espeak: table.espeak, pitch, range, wpm, language: "en" };
}

export function cloneVoice(pcm: Int16Array, rate = CLONE_ANALYSIS_RATE): ClonedVoiceParams {
  const sample = analyseSample(pcm, rate);
  return { sample, voice: voiceFromAnalysis(sample) };
}
