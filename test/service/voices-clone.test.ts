// The voice-cloning analysis on signals whose answer is known: harmonic tones at set F0s (YIN and
// the tests' own autocorrelation must both find them), espeak-ng speech at set rates and pitches.
import { describe, expect, it } from "vitest";
import { resample } from "../../codecs/resample.ts";
import {
  analyseSample,
  CLONE_ANALYSIS_RATE,
  CloneError,
  cloneVoice,
} from "../../src/service/engines/tts/clone/derive.ts";
import { f0Track, quantile, voicedF0 } from "../../src/service/engines/tts/clone/f0.ts";
import { lowpass } from "../../src/service/engines/tts/clone/lowpass.ts";
import { speak } from "../helpers/speech.ts";
import { medianF0 } from "./helpers/f0.ts";

const RATE = CLONE_ANALYSIS_RATE;

/** A voiced-like tone: 12 harmonics of f0 falling 6 dB per octave, with a slow 3% vibrato. */
function harmonicTone(f0: number, seconds: number, rate = RATE): Int16Array {
  const out = new Int16Array(Math.round(seconds * rate));
  let phase = 0;
  for (let i = 0; i < out.length; i++) {
    const f = f0 * (1 + 0.03 * Math.sin((2 * Math.PI * 2 * i) / rate));
    phase += (2 * Math.PI * f) / rate;
    let s = 0;
    for (let k = 1; k <= 12 && k * f0 < rate / 2; k++) s += Math.sin(k * phase) / k;
    out[i] = Math.round(6000 * s);
  }
  return out;
}

const speech = (text: string, o: { voice?: string; pitch?: number; wpm?: number }) =>
  resample(speak(text, { rate: 16000, ...o }), 16000, RATE);

const TEXT =
  "Hello, this is Sam calling about the blue bicycle I ordered last week. It has not arrived yet, could you check?";

describe("F0 by YIN", () => {
  for (const f0 of [75, 110, 180, 260, 350]) {
    it(`finds ${f0} Hz in a harmonic tone (and so does the tests' autocorrelation)`, () => {
      const tone = harmonicTone(f0, 1);
      const yin = quantile(voicedF0(f0Track(lowpass(tone, RATE, 1000), RATE)), 0.5);
      expect(Math.abs(yin / f0 - 1)).toBeLessThan(0.02);
      expect(Math.abs(medianF0(tone, RATE) / f0 - 1)).toBeLessThan(0.03);
    });
  }

  it("reports no pitch in silence or white noise", () => {
    expect(voicedF0(f0Track(new Float32Array(RATE), RATE)).length).toBe(0);
    let seed = 7;
    const noise = Float32Array.from({ length: RATE }, () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed / 2 ** 32 - 0.5) * 0.5;
    });
    const voiced = voicedF0(f0Track(noise, RATE)).length;
    expect(voiced).toBeLessThan(5);
  });
});

describe("sample analysis", () => {
  it("reads a slow speaker as slower than a fast one", () => {
    const slow = analyseSample(speech(TEXT, { wpm: 120 }));
    const fast = analyseSample(speech(TEXT, { wpm: 240 }));
    expect(fast.syllablesPerSecond / slow.syllablesPerSecond).toBeGreaterThan(1.5);
  });

  it("maps a low voice to the male variant at a low pitch, a high one to the female variant", () => {
    const low = cloneVoice(speech(TEXT, { voice: "en-us", pitch: 5 }));
    const high = cloneVoice(speech(TEXT, { voice: "en-us+f4", pitch: 85 }));
    expect(low.voice.espeak).toBe("en-us");
    expect(low.voice.pitch).toBeLessThan(25);
    expect(high.voice.espeak).toBe("en-us+f3");
    expect(high.voice.pitch).toBeGreaterThan(60);
    expect(high.sample.f0Hz / low.sample.f0Hz).toBeGreaterThan(2.5);
  });

  it("refuses silence and a steady tone: no one is speaking", () => {
    expect(() => analyseSample(new Int16Array(6 * RATE))).toThrow(CloneError);
    expect(() => analyseSample(harmonicTone(200, 6))).toThrow(/no speech rhythm/);
  });
});
