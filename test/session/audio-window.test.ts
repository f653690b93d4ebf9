import { describe, expect, it } from "vitest";
import { AudioWindow } from "../../src/session/utterance.ts";

/** Samples numbered by their stream position (mod 2^15), so any misplacement shows. */
function ramp(from: number, n: number): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => (from + i) % 32768);
}

describe("AudioWindow", () => {
  // 1 kHz × 1 s: a 1000-sample ring, written in 20 ms frames of 20 samples and odd-sized chunks.
  it("gives back what was written, by stream time, across many turns of the ring", () => {
    const w = new AudioWindow(1000, 1);
    let pos = 0;
    for (const n of [20, 20, 7, 333, 20, 999, 20, 1, 640, 20, 20]) {
      w.write(ramp(pos, n));
      pos += n;
    }
    expect(w.nowMs).toBe(pos);
    expect([...w.slice(pos - 1000)]).toEqual([...ramp(pos - 1000, 1000)]);
    expect([...w.slice(pos - 37, pos - 5)]).toEqual([...ramp(pos - 37, 32)]);
  });

  it("clips a slice to what the ring still holds", () => {
    const w = new AudioWindow(1000, 1);
    w.write(ramp(0, 1500));
    expect([...w.slice(0, 600)]).toEqual([...ramp(500, 100)]);
  });

  it("keeps the last ring's worth of a write longer than the ring, each sample at its stream position", () => {
    const w = new AudioWindow(1000, 1);
    w.write(ramp(0, 130));
    w.write(ramp(130, 2345));
    expect([...w.slice(0)]).toEqual([...ramp(1475, 1000)]);
    w.write(ramp(2475, 20));
    expect([...w.slice(1495)]).toEqual([...ramp(1495, 1000)]);
  });

  it("readInto gives what slice gives, into a caller's buffer, and says how many samples", () => {
    const w = new AudioWindow(1000, 1);
    w.write(ramp(0, 2500));
    const out = new Int16Array(1200).fill(-7);
    for (const [from, to] of [
      [0, 600],
      [1499, 2500],
      [1800.4, 2212.6],
      [2400, 2400],
      [2600, 2700],
    ] as const) {
      const n = w.readInto(from, to, out);
      expect(n).toBe(w.samplesBetween(from, to));
      expect([...out.subarray(0, n)]).toEqual([...w.slice(from, to)]);
    }
    expect(() => w.readInto(1500, 2500, new Int16Array(999))).toThrow(RangeError);
  });
});
