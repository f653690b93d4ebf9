// The frame-by-frame pitch on voice-like buzzes of known pitch, at both rates the bridge feeds it.
import { describe, expect, it } from "vitest";
import { FramePitch, semitones } from "../../codecs/pitch.ts";
import { noise } from "../helpers/noise.ts";
import { voiceSignal } from "../helpers/voice-signals.ts";

/** The pitch of every frame of `pcm` after the first (which has no frame before it). */
function track(pcm: Int16Array, rate: number): number[] {
  const p = new FramePitch();
  const frame = rate / 50;
  const out: number[] = [];
  for (let s = 0; s + frame <= pcm.length; s += frame) {
    p.push(pcm.subarray(s, s + frame), rate);
    if (s > 0) out.push(p.pitch());
  }
  return out;
}

describe("FramePitch", () => {
  it.each([8000, 16000])("finds a voice's pitch at %i Hz, within its ±10 %% intonation", (rate) => {
    // Every word of one sound: no pauses, the syllables' loudness rising and falling.
    const pcm = voiceSignal({ rate, ms: 2000, dbfs: -20, f0: 150, seed: 3, pauseShare: 0.01 });
    const voiced = track(pcm, rate).filter((st) => !Number.isNaN(st));
    expect(voiced.length).toBeGreaterThan(80);
    for (const st of voiced) expect(Math.abs(st - semitones(150))).toBeLessThan(2);
  });

  it("calls hiss unvoiced, and a frame at another rate too", () => {
    const hiss = noise(1000, 8000, { dbfs: -30, seed: 2 });
    const voiced = track(hiss, 8000).filter((st) => !Number.isNaN(st));
    expect(voiced.length).toBeLessThan(3);
    const p = new FramePitch();
    const buzz = voiceSignal({ rate: 48000, ms: 40, dbfs: -20, f0: 150, seed: 3, pauseShare: 0.01 });
    p.push(buzz.subarray(0, 960), 48000);
    p.push(buzz.subarray(960, 1920), 48000);
    expect(p.pitch()).toBeNaN();
  });
});
