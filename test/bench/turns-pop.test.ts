// `--pop MS` (bench/lib/turns-pop.ts): each call's line pops MS into the call, 8 ms of noise 6 dB
// under full scale, and nothing else of the call moves.
import { describe, expect, it } from "vitest";
import { CALL_RATE, type TurnCase } from "../../bench/lib/turns-cases.ts";
import { POP_DBFS, POP_MS, parsePop, withPop } from "../../bench/lib/turns-pop.ts";
import { noise } from "../helpers/noise.ts";

const at = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** A cough over the greeting in a 3 s call over a faint hiss: a pop is the line's, so it gets one too. */
const coughCase = (): TurnCase => ({
  id: "cough-1",
  category: "cough",
  text: "",
  voice: "synthetic",
  speed: 1,
  over: "greeting",
  caller: noise(3000, CALL_RATE, { dbfs: -60, seed: 3 }),
  startMs: 1000,
  endMs: 1200,
  maxSeconds: 3,
});

describe("a line that pops as the call connects", () => {
  it("pops at the time asked, at its level, and leaves the rest of the call alone", () => {
    const c = coughCase();
    const p = withPop(c, 200);
    expect(p.caller.length).toBe(c.caller.length);
    expect(p.caller.subarray(0, at(200))).toEqual(c.caller.subarray(0, at(200)));
    expect(p.caller.subarray(at(200 + POP_MS))).toEqual(c.caller.subarray(at(200 + POP_MS)));
    const pop = p.caller.subarray(at(200), at(200 + POP_MS));
    const rmsDb = 10 * Math.log10(pop.reduce((sum, v) => sum + v * v, 0) / pop.length / 32768 ** 2);
    expect(Math.abs(rmsDb - POP_DBFS)).toBeLessThan(1);
    expect(c.caller).not.toBe(p.caller);
  });

  it("takes ms into the call, and says which flag was wrong", () => {
    expect(parsePop(undefined)).toBeUndefined();
    expect(parsePop("0")).toBe(0);
    expect(() => parsePop("-5")).toThrow(/--pop wants ms into the call/);
    expect(() => parsePop("soon")).toThrow(/--pop/);
  });
});
