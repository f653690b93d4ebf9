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
