// WebRTC's noise suppressor (native/webrtc/ns.cc) on synthesized signals: a steady hiss is
// lowered once learned, a voice-like signal over it keeps most of its level, and the frame given is
// left as it was (the recording keeps what was sent).
import { describe, expect, it } from "vitest";
import { meanSquare, powerDb } from "../../codecs/level-tracker.ts";
import { NoiseSuppressor } from "../../codecs/noise-suppressor.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";

const RATE = 8000;
const FRAME = 160;

/** `pcm` through a suppressor in 20 ms frames; the output's level after `fromMs`, and the input's. */
function suppress(pcm: Int16Array, fromMs: number): { inDb: number; outDb: number } {
  const ns = new NoiseSuppressor(RATE);
  const out = new Int16Array(pcm.length);
  for (let s = 0; s + FRAME <= pcm.length; s += FRAME) out.set(ns.cleaned(pcm.subarray(s, s + FRAME)), s);
  const from = (fromMs * RATE) / 1000;
  return { inDb: powerDb(meanSquare(pcm.subarray(from))), outDb: powerDb(meanSquare(out.subarray(from))) };
}

describe("noise suppression", () => {
  it("lowers a steady hiss by more than 10 dB once it has learned it", () => {
    const { inDb, outDb } = suppress(noise(6000, RATE, { dbfs: -40, seed: 31 }), 2000);
    expect(outDb).toBeLessThan(inDb - 10);
  });

  it("keeps a voice over the hiss within a few dB", () => {
    const hiss = noise(6000, RATE, { dbfs: -45, seed: 32 });
    const voice = voiceSignal({ rate: RATE, ms: 3000, dbfs: -20, f0: 130, seed: 33, pauseShare: 0 });
    const { inDb, outDb } = suppress(mixAt([{ pcm: hiss }, { pcm: voice, at: 3000 * 8 }]), 3000);
    expect(outDb).toBeGreaterThan(inDb - 3);
  });

  it("leaves the frame it is given as it was", () => {
    const ns = new NoiseSuppressor(RATE);
    const frame = noise(20, RATE, { dbfs: -30, seed: 34 });
    const copy = frame.slice();
    const cleaned = ns.cleaned(frame);
    expect(frame).toEqual(copy);
    expect(cleaned).not.toBe(frame);
    // A frame that is not whole 10 ms blocks is passed through.
    const odd = new Int16Array(100);
    expect(ns.cleaned(odd)).toBe(odd);
  });
});
