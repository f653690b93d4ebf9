// End prosody on synthetic voices: a pitch glide with harmonics, so the figures are known.
import { describe, expect, it } from "vitest";
import { endProsody } from "../../src/session/prosody.ts";
import { seededRandom } from "../helpers/noise.ts";

const RATE = 16000;

/** A buzz of `ms` whose pitch moves linearly from `fromHz` to `toHz` over its last `glideMs`. */
function voice(ms: number, fromHz: number, toHz: number, glideMs = 300, fadeDb = 0): Int16Array {
  const n = (ms * RATE) / 1000;
  const glideFrom = n - (glideMs * RATE) / 1000;
  const out = new Int16Array(n);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const t = Math.max(0, (i - glideFrom) / (n - glideFrom));
    phase += (2 * Math.PI * (fromHz + (toHz - fromHz) * t)) / RATE;
    const level = 10 ** ((fadeDb * t) / 20);
    let v = 0;
    for (let k = 1; k <= 5; k++) v += Math.sin(k * phase) / k;
    out[i] = Math.round(6000 * level * v);
  }
  return out;
}

describe("endProsody", () => {
  it("hears a final fall as a fall: negative slope, an end below the median", () => {
    const p = endProsody(voice(1200, 180, 130))!;
    expect(p.f0SlopeStPerS).toBeLessThan(-10);
    expect(p.f0EndSt).toBeLessThan(-3);
  });

  it("hears a rise as a rise, and a held pitch as level", () => {
    const rise = endProsody(voice(1200, 150, 210))!;
    expect(rise.f0SlopeStPerS).toBeGreaterThan(10);
    expect(rise.f0EndSt).toBeGreaterThan(3);
    const level = endProsody(voice(1200, 160, 160))!;
    expect(Math.abs(level.f0SlopeStPerS)).toBeLessThan(1);
    expect(Math.abs(level.f0EndSt)).toBeLessThan(0.5);
  });

  it("measures the final level against the loud part", () => {
    expect(endProsody(voice(1200, 160, 160, 300, -12))!.levelEndDb).toBeLessThan(-6);
  });

  it("says nothing of noise or of too little audio", () => {
    const rand = seededRandom(3);
    const noise = Int16Array.from({ length: RATE }, () => Math.round((rand() * 2 - 1) * 4000));
    expect(endProsody(noise)).toBeUndefined();
    expect(endProsody(voice(40, 160, 160))).toBeUndefined();
  });
});
