// The caller's voice beyond its level: what is a voice at all. YIN often finds no pitch in a
// caller's frames under music (it hears the music's); those frames still come near a period, as a
// voice's do, where a street's noise does not.
import { describe, expect, it } from "vitest";
import { background } from "../../bench/lib/turns-backgrounds.ts";
import { VoicePrint } from "../../src/session/voice-print.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";

const RATE = 8000;

/** A room of the noisy turn set's, 2 s at an active level of `dbfs`. */
function room(kind: "music" | "street", dbfs: number): Int16Array {
  const x = background({ kind, belowDb: 0 }, 2000, 3);
  return Int16Array.from(x, (v) => Math.round(v * 32768 * 10 ** (dbfs / 20)));
}

/** The shares of `pcm`'s 20 ms frames in which YIN found no pitch, and that were aperiodic. */
function shares(pcm: Int16Array): { unvoiced: number; aperiodic: number } {
  const print = new VoicePrint();
  let frames = 0;
  let unvoiced = 0;
  let aperiodic = 0;
  for (let s = 0; s + 160 <= pcm.length; s += 160) {
    print.frame(pcm.subarray(s, s + 160), RATE);
    frames++;
    if (Number.isNaN(print.pitch())) unvoiced++;
    if (print.aperiodic()) aperiodic++;
  }
  return { unvoiced: unvoiced / frames, aperiodic: aperiodic / frames };
}

describe("a voice print", () => {
  it("takes a street's noise for no voice at all", () => {
    expect(shares(room("street", -24)).aperiodic).toBeGreaterThan(0.95);
  });

  it("takes a voice under music for a voice, where YIN finds no pitch in it", () => {
    const voice = voiceSignal({ rate: RATE, ms: 2000, dbfs: -22, f0: 120, seed: 65, pauseShare: 0 });
    const { unvoiced, aperiodic } = shares(mixAt([{ pcm: room("music", -32) }, { pcm: voice }]));
    // YIN misses the pitch in a quarter of the frames or more; most of those come near a period.
    expect(unvoiced).toBeGreaterThan(0.2);
    expect(aperiodic).toBeLessThan(unvoiced / 2);
  });
});
