// The ring of the caller's last frames the gate reads back through: what it holds once it has
// wrapped, and the levels and marks read from it.
import { describe, expect, it } from "vitest";
import { NO_SIGNAL_DB, powerDb } from "../../codecs/level-tracker.ts";
import { CallerFrames, type FrameMarks } from "../../src/session/caller-frames.ts";

const none: FrameMarks = {
  mine: false,
  speech: false,
  nearVoiced: false,
  clearVoiced: false,
  theirVoice: false,
  softerTheirs: false,
  held: false,
};

/** `n` 20 ms frames, frame i at level −60 + i % 40 dBFS (its power to match). */
function filled(n: number, marks: (i: number) => Partial<FrameMarks> = () => ({})): CallerFrames {
  const f = new CallerFrames();
  for (let i = 0; i < n; i++) {
    const db = -60 + (i % 40);
    f.add(db, 10 ** (db / 10), (i + 1) * 20, { ...none, ...marks(i) });
  }
  return f;
}

describe("the caller's last frames", () => {
  it("hold the last five seconds once the call is longer, each frame where it was", () => {
    const f = filled(1000);
    expect(f.written).toBe(1000);
    expect(f.oldest).toBe(1000 - 256);
    expect(f.endMs(999)).toBe(20_000);
    expect(f.startMs(999)).toBe(19_980);
    // The oldest frame held: the one before it is gone, so its start is its end less a frame.
    expect(f.startMs(f.oldest)).toBe(f.endMs(f.oldest) - 20);
    expect(f.db(f.oldest)).toBe(-60 + (f.oldest % 40));
  });

  it("give the loudest level of a span, and of what came after a moment, over held frames only", () => {
    const f = filled(1000);
    expect(f.loudest(990, 999)).toBe(-60 + 39); // frame 999 is 999 % 40 = 39
    expect(f.loudestSince(19_900)).toBe(-21);
    expect(new CallerFrames().loudestSince(0)).toBe(NO_SIGNAL_DB);
  });

  it("level a frame over only the frames after the detector's start", () => {
    const f = filled(100);
    // Frames 95..99 end at 1920..2000 ms: after 1940 ms, only 97, 98 and 99 count.
    const want = powerDb((10 ** (-43 / 10) + 10 ** (-42 / 10) + 10 ** (-41 / 10)) / 3);
    expect(f.levelSince(99, 1940, 5)).toBeCloseTo(want, 9);
    expect(f.levelSince(99, 2000, 5)).toBe(NO_SIGNAL_DB);
  });

  it("tell a pop, a frame or two far over those around it, from a sound that goes on", () => {
    // A hiss at −60 dBFS; a pop at frames 3 and 4 (−10); a voice from frame 10 on (−30).
    const level = (i: number) => (i === 3 || i === 4 ? -10 : i >= 10 ? -30 : -60);
    const f = new CallerFrames();
    for (let i = 0; i < 16; i++) f.add(level(i), 10 ** (level(i) / 10), (i + 1) * 20, none);
    expect([3, 4].map((i) => f.popAt(i, 2, 12))).toEqual([true, true]);
    // The voice's first frames are as loud as those after them: no pop.
    expect([10, 11, 12].map((i) => f.popAt(i, 2, 12))).toEqual([false, false, false]);
    expect(f.popAt(2, 2, 12)).toBe(false);
    // Frames 2..6 without the pop: the hiss; frames 8..12 as they are.
    expect(f.levelWithoutPops(6, 5, 2, 12)).toBeCloseTo(-60, 9);
    expect(f.levelWithoutPops(12, 5, 2, 12)).toBeCloseTo(powerDb((2 * 1e-6 + 3 * 1e-3) / 5), 9);
    expect(() => f.popAt(3, 5, 12)).toThrow(RangeError);
  });

  it("mark the caller's frames from a moment on, and find their voice within a span", () => {
    const f = filled(600, (i) => ({ theirVoice: i === 550, speech: i >= 500 }));
    f.markMine(f.oldest, 11_000, true); // frames ending after 11 s: 550 on
    expect(f.mine(549)).toBe(false);
    expect(f.mine(550)).toBe(true);
    expect(f.speech(500)).toBe(true);
    expect(f.nearTheirVoice(540, 10)).toBe(true);
    expect(f.nearTheirVoice(539, 10)).toBe(false);
    expect(f.nearTheirVoice(560, 10)).toBe(true);
    expect(f.nearTheirVoice(561, 10)).toBe(false);
  });
});
