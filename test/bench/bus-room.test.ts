// The bus bench/rooms.sh makes (bench/lib/bus-room.ts): the same on every machine, passages with
// quiet between them, an engine's pitch in a low voice's range.
import { describe, expect, it } from "vitest";
import { busRoom } from "../../bench/lib/bus-room.ts";
import { meanSquare, powerDb } from "../../codecs/level-tracker.ts";
import { FramePitch } from "../../codecs/pitch.ts";

const RATE = 16000;
const FRAME = RATE / 50;

/** Each 20 ms frame's level, dBFS. */
function frameLevels(pcm: Int16Array): number[] {
  const out: number[] = [];
  for (let i = 0; i + FRAME <= pcm.length; i += FRAME)
    out.push(powerDb(meanSquare(pcm.subarray(i, i + FRAME))));
  return out;
}

describe("the bus room", () => {
  it("is the same on every run, peaking at -3 dBFS", () => {
    const a = busRoom(20);
    expect(busRoom(20)).toEqual(a);
    expect(a).toHaveLength(20 * RATE);
    const peak = a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(20 * Math.log10(peak / 32768)).toBeCloseTo(-3, 0);
  });

  it("comes in passages of seconds, with quiet between them", () => {
    const levels = frameLevels(busRoom(60));
    const loud = levels.map((db) => db > -30);
    // Runs of loud frames: each passage's middle, its swell and fade under the bar.
    const runs: number[] = [];
    let run = 0;
    for (const l of loud) {
      if (l) run++;
      else if (run > 0) {
        runs.push(run);
        run = 0;
      }
    }
    // A swell's edge crosses the bar back and forth for a frame or two.
    const passages = runs.filter((r) => r * 20 >= 200);
    expect(passages.length).toBeGreaterThanOrEqual(7);
    expect(passages.length).toBeLessThanOrEqual(14);
    for (const r of passages) expect(r * 20).toBeGreaterThan(1000);
    expect(loud.filter((l) => !l).length).toBeGreaterThan(loud.length / 3);
  });

  it("has an engine's pitch, in a low voice's range", () => {
    const pcm = busRoom(20);
    const levels = frameLevels(pcm);
    const pitch = new FramePitch();
    const found: number[] = [];
    for (let f = 0; f < levels.length; f++) {
      pitch.push(pcm.subarray(f * FRAME, (f + 1) * FRAME), RATE);
      if (levels[f]! > -20) {
        const st = pitch.pitch();
        if (!Number.isNaN(st)) found.push(100 * 2 ** (st / 12));
      }
    }
    expect(found.length).toBeGreaterThan(50);
    found.sort((x, y) => x - y);
    const median = found[found.length >> 1]!;
    // 55–95 Hz, or an octave up where the second harmonic leads.
    expect(median).toBeGreaterThan(45);
    expect(median).toBeLessThan(200);
  });
});
