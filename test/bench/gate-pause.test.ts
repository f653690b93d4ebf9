import { describe, expect, it } from "vitest";
import { pauseHeardLonger } from "../../bench/lib/gate-pause.ts";

// An utterance 4,200–7,450 ms with a pause 5,400–6,130 (730 ms), as the flite set's pause-8.
const c = { startMs: 4200, endMs: 7450, pauseFromMs: 5400, pauseToMs: 6130 };

describe("the pause as the gate heard it", () => {
  it("counts an end before the pause began and a late resumption both", () => {
    // Ended 310 ms before the pause, heard again 540 ms after it.
    expect(pauseHeardLonger(c, [4270, 6670], [5090, 7280])).toBe(850);
  });

  it("takes the last end before the resumption, not an earlier one the gate heard again after", () => {
    expect(pauseHeardLonger(c, [4270, 4700, 6200], [4600, 5450, 7280])).toBe(20);
  });

  it("says nothing of a pause the gate held the caller's speech through", () => {
    expect(pauseHeardLonger(c, [4270], [7280])).toBeUndefined();
    // Ended early, heard again before the pause began, and held through it.
    expect(pauseHeardLonger(c, [4270, 5200], [5000, 7280])).toBeUndefined();
  });

  it("says nothing of a resumption never heard before the caller's last word", () => {
    expect(pauseHeardLonger(c, [4270, 7500], [5450, 7600])).toBeUndefined();
    expect(pauseHeardLonger(c, [4270], [5450])).toBeUndefined();
  });

  it("says nothing of a case with no pause", () => {
    expect(pauseHeardLonger({ startMs: 4200, endMs: 7450 }, [4270], [5450])).toBeUndefined();
  });

  it("counts a pause heard shorter than it was as negative", () => {
    expect(pauseHeardLonger(c, [4270, 6100], [5500, 7280])).toBe(-130);
  });
});
