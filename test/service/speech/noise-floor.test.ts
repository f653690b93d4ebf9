import { describe, expect, it } from "vitest";
import { NOISE_FLOOR_DB, speechRms, withNoiseFloor } from "../../../src/service/engines/asr/noise-floor.ts";

function tone(seconds: number, amp: number, gapSeconds = 0): Int16Array {
  const n = Math.round(16000 * seconds);
  const out = new Int16Array(n + Math.round(16000 * gapSeconds));
  for (let i = 0; i < n; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / 16000));
  return out;
}

describe("ASR noise floor", () => {
  it("measures the speech level on the louder half of the frames", () => {
    const pcm = tone(1, 10000, 1); // half tone, half digital silence
    expect(speechRms(pcm)).toBeCloseTo(10000 / Math.SQRT2, -1);
  });

  it("adds white noise NOISE_FLOOR_DB below the speech level, deterministically", () => {
    const pcm = tone(1, 10000, 1);
    const out = withNoiseFloor(pcm);
    const gap = out.subarray(16000);
    let s = 0;
    for (const x of gap) s += x * x;
    const noiseRms = Math.sqrt(s / gap.length);
    const db = 20 * Math.log10(noiseRms / speechRms(pcm));
    expect(db).toBeGreaterThan(NOISE_FLOOR_DB - 1);
    expect(db).toBeLessThan(NOISE_FLOOR_DB + 1);
    expect(withNoiseFloor(pcm)).toEqual(out);
    expect(pcm[16000 + 5]).toBe(0); // the input is not modified
  });

  it("leaves silence silent", () => {
    expect(withNoiseFloor(new Int16Array(1600))).toEqual(new Int16Array(1600));
  });
});
