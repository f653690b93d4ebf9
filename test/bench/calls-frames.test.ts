// The calls benchmark's caller-side frame yardstick on hand-made arrival patterns.
import { describe, expect, it } from "vitest";
import { analyzeAgentFrames } from "../../bench/lib/calls-frames.ts";

/** A pacer's pattern: `burst` frames at once at `at`, then one every 20 ms. */
function paced(at: number, frames: number, burst = 10): number[] {
  return Array.from({ length: frames }, (_, i) => (i < burst ? at : at + (i - burst + 1) * 20));
}

const none = { clearsMs: [], callerSpeechStartsMs: [] };

describe("analyzeAgentFrames", () => {
  it("a lead burst followed by real-time frames is never late and makes one stretch", () => {
    const a = analyzeAgentFrames(paced(1000, 100), none);
    expect(a.frames).toBe(100);
    expect(Math.max(...a.latenessMs)).toBe(0);
    expect(a.stretches).toBe(1);
    expect(a.gapFrames).toBe(0);
  });

  it("a frame held back 7 ms is 7 ms late; its catch-up successor is on time again", () => {
    const t = paced(1000, 40);
    t[20] = t[20]! + 7;
    const a = analyzeAgentFrames(t, none);
    expect(a.latenessMs[20]).toBeCloseTo(7, 9);
    expect(a.latenessMs[21]).toBe(0);
    expect(a.gapFrames).toBe(0);
  });

  it("a stall longer than the lead lets the line run dry: a gap of ceil(silence / 20) frames", () => {
    // 10 frames at 1000 play until 1200; the next ones come 250 ms late (at 1270 instead of 1020).
    const t = [...paced(1000, 10), ...paced(1270, 30)];
    const a = analyzeAgentFrames(t, none);
    expect(a.stretches).toBe(2);
    expect(a.gaps).toBe(1);
    expect(a.gapFrames).toBe(Math.ceil(70 / 20));
  });

  it("silence between replies, with the caller speaking in between, is no gap; neither is a clear", () => {
    const t = [...paced(1000, 20), ...paced(1800, 20)];
    const spoke = analyzeAgentFrames(t, { clearsMs: [], callerSpeechStartsMs: [1500] });
    expect(spoke).toMatchObject({ stretches: 2, gaps: 0, gapFrames: 0 });
    // Without caller speech a 400 ms hole inside an utterance counts.
    expect(analyzeAgentFrames(t, none).gapFrames).toBe(Math.ceil((1800 - 1400) / 20));
    const cleared = analyzeAgentFrames([...paced(1000, 12), ...paced(1100, 10)], {
      clearsMs: [1090],
      callerSpeechStartsMs: [],
    });
    expect(cleared).toMatchObject({ stretches: 2, gaps: 0 });
    expect(Math.max(...cleared.latenessMs)).toBe(0);
  });

  it("a silence longer than maxGapMs is a new utterance (a re-prompt), not a hole", () => {
    const a = analyzeAgentFrames([...paced(1000, 10), ...paced(9000, 10)], none);
    expect(a).toMatchObject({ stretches: 2, gaps: 0 });
  });
});
