// `--hello MS` (bench/lib/turns-hello.ts): each caller says "Hello?" MS into the call, in their own
// voice (the real espeak-ng) at their own speech level, and nothing else of the call moves.
import { describe, expect, it } from "vitest";
import { activeLevelDb } from "../../bench/lib/turns-backgrounds.ts";
import { CALL_RATE, espeakSynth, type TurnCase } from "../../bench/lib/turns-cases.ts";
import { parseHello, withHello } from "../../bench/lib/turns-hello.ts";
import { noise } from "../helpers/noise.ts";
import { mixPcm } from "../helpers/speech.ts";

const at = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** A question 8 dB quieter than espeak says it, at 3 s of a 6 s call over a faint hiss. */
function questionCase(): TurnCase {
  const said = espeakSynth.speak("Where are you located?", { voice: "en-gb", speed: 160 });
  const quieter = said.map((v) => Math.round(v * 10 ** (-8 / 20)));
  const caller = mixPcm(noise(6000, CALL_RATE, { dbfs: -60, seed: 3 }), quieter, at(3000));
  return {
    id: "complete-1",
    category: "complete",
    text: "Where are you located?",
    voice: "en-gb",
    speed: 160,
    over: "silence",
    caller,
    startMs: 3000,
    endMs: 3000 + (quieter.length * 1000) / CALL_RATE,
    maxSeconds: 6,
  };
}

describe("a caller who says hello as the call connects", () => {
  it("says it at the time asked, at the level they speak at, and leaves the rest of the call alone", () => {
    const c = questionCase();
    const h = withHello(c, 200, espeakSynth);
    expect(h.caller.length).toBe(c.caller.length);
    // Nothing before it, and the question after it, is touched.
    expect(h.caller.subarray(0, at(200))).toEqual(c.caller.subarray(0, at(200)));
    expect(h.caller.subarray(at(2900))).toEqual(c.caller.subarray(at(2900)));
    const hello = h.caller.subarray(at(200), at(1500));
    const question = c.caller.subarray(at(c.startMs), at(c.endMs));
    expect(Math.abs(activeLevelDb(hello) - activeLevelDb(question))).toBeLessThan(1.5);
    // It starts where asked (its soft "h" first): audible within 50 ms, over a hiss at −60 dBFS.
    expect(activeLevelDb(h.caller.subarray(at(200), at(250)))).toBeGreaterThan(-50);
  });

  it("leaves a cough case as it was: its caller's voice is not on record", () => {
    const cough: TurnCase = { ...questionCase(), id: "cough-1", category: "cough", over: "greeting" };
    expect(withHello(cough, 0, espeakSynth)).toBe(cough);
  });

  it("takes ms into the call, and says which flag was wrong", () => {
    expect(parseHello(undefined)).toBeUndefined();
    expect(parseHello("0")).toBe(0);
    expect(() => parseHello("-5")).toThrow(/--hello wants ms into the call/);
    expect(() => parseHello("soon")).toThrow(/--hello/);
  });
});
