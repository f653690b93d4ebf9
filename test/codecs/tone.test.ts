import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { ToneBank, ToneTracker } from "../../codecs/tone.ts";
import { speak } from "../helpers/speech.ts";

const RATE = 8000;

function tone(hz: number, ms: number, amplitude = 8000, rate = RATE): Int16Array {
  const out = new Int16Array(Math.round((ms * rate) / 1000));
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/** Runs PCM through a tracker in 20 ms frames; the tones it reported. */
function track(pcm: Int16Array, rate = RATE) {
  const t = new ToneTracker({ sampleRate: rate });
  const n = rate / 50;
  const found = [];
  for (let i = 0; i + n <= pcm.length; i += n) {
    const e = t.push(pcm.subarray(i, i + n), (i / rate) * 1000, 20);
    if (e) found.push(e);
  }
  return found;
}

describe("ToneBank", () => {
  it("finds a pure tone's pitch and calls it pure, off the filters' grid too", () => {
    const bank = new ToneBank(RATE);
    for (const hz of [440, 1000, 1412, 2100]) {
      const r = bank.analyse(tone(hz, 20));
      expect(Math.abs(r.hz - hz)).toBeLessThanOrEqual(25);
      expect(r.purity).toBeGreaterThan(0.6);
    }
  });

  it("finds speech impure", () => {
    const bank = new ToneBank(RATE);
    const pcm = speak("please leave a message for the doctor", { rate: RATE });
    let tonal = 0;
    let frames = 0;
    for (let i = 0; i + 160 <= pcm.length; i += 160) {
      const r = bank.analyse(pcm.subarray(i, i + 160));
      if (r.rms < 300) continue;
      frames++;
      if (r.purity >= 0.6) tonal++;
    }
    expect(frames).toBeGreaterThan(50);
    expect(tonal / frames).toBeLessThan(0.15);
  });
});

describe("ToneTracker", () => {
  it("reports a beep of 150 ms or more once it ends, at its end", () => {
    for (const [hz, ms] of [
      [1000, 200],
      [440, 500],
      [2000, 160],
      [850, 1000],
    ] as const) {
      const found = track(concatPcm([new Int16Array(RATE / 2), tone(hz, ms), new Int16Array(RATE / 2)]));
      expect(found).toHaveLength(1);
      expect(Math.abs(found[0]!.hz - hz)).toBeLessThanOrEqual(25);
      expect(Math.abs(found[0]!.endMs - (500 + ms))).toBeLessThanOrEqual(40);
    }
  });

  it("ignores tones too short, too low or too high, and speech", () => {
    expect(track(concatPcm([tone(1000, 100), new Int16Array(RATE)]))).toHaveLength(0);
    expect(track(concatPcm([tone(200, 500), new Int16Array(RATE)]))).toHaveLength(0);
    expect(track(concatPcm([tone(3000, 500), new Int16Array(RATE)]))).toHaveLength(0);
    const words = speak("hello, you have reached the voicemail of Jamie, I am not available right now", {
      rate: RATE,
    });
    expect(track(concatPcm([words, new Int16Array(RATE)]))).toHaveLength(0);
  });

  it("works at 48 kHz (Opus calls)", () => {
    const found = track(concatPcm([tone(1000, 300, 8000, 48000), new Int16Array(48000)]), 48000);
    expect(found).toHaveLength(1);
  });
});
