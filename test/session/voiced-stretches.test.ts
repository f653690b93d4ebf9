// The caller's voice in the stretches it came in: short ones are syllables, long ones a drone.
import { describe, expect, it } from "vitest";
import { SYLLABLE_MAX_MS, VoicedStretches } from "../../src/session/voiced-stretches.ts";

/** Voiced frames of 20 ms over [fromMs, toMs) of the stream. */
function voicedOver(v: VoicedStretches, fromMs: number, toMs: number): void {
  for (let t = fromMs + 20; t <= toMs; t += 20) v.add(t, 20);
}

describe("VoicedStretches", () => {
  it("counts stretches of up to a syllable's length as syllabic, longer ones not", () => {
    const v = new VoicedStretches();
    voicedOver(v, 0, 200);
    voicedOver(v, 300, 300 + SYLLABLE_MAX_MS);
    voicedOver(v, 1000, 1000 + SYLLABLE_MAX_MS + 20);
    voicedOver(v, 2000, 2100);
    expect(v.voicedMs).toBe(200 + SYLLABLE_MAX_MS + SYLLABLE_MAX_MS + 20 + 100);
    expect(v.syllabicMs).toBe(200 + SYLLABLE_MAX_MS + 100);
  });

  it("counts the stretch still going while it is a syllable's, and not once it outgrows one", () => {
    const v = new VoicedStretches();
    voicedOver(v, 0, 300);
    expect(v.syllabicMs).toBe(300);
    voicedOver(v, 300, 600);
    expect(v.syllabicMs).toBe(0);
    expect(v.voicedMs).toBe(600);
  });

  it("takes one missing frame for the end of a stretch", () => {
    const v = new VoicedStretches();
    voicedOver(v, 0, 300);
    voicedOver(v, 320, 620);
    expect(v.syllabicMs).toBe(600);
  });
});
