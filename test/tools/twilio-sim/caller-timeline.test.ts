// The caller's timeline with cues, frame by frame: it waits at a cue until the agent has been heard
// long enough, plays the room meanwhile, and reports how long it waited.
import { describe, expect, it } from "vitest";
import { CallerTimeline, onStream } from "../../../tools/twilio-sim/caller-timeline.ts";

const RATE = 8000;
const FRAME = 160;
/** A timeline whose sample i is i (mod 30000), so where each played sample came from shows. */
const ramp = (ms: number) => Int16Array.from({ length: (ms * RATE) / 1000 }, (_, i) => i % 30000);

/** Plays `frames` frames; `agent(k)` says whether the agent was heard in frame k. */
function play(t: CallerTimeline, frames: number, agent: (k: number) => boolean): Int16Array {
  const out = new Int16Array(frames * FRAME);
  const frame = new Int16Array(FRAME);
  for (let k = 0; k < frames; k++) {
    t.next(frame, k > 0 && agent(k - 1));
    out.set(frame, k * FRAME);
  }
  return out;
}

describe("CallerTimeline", () => {
  it("without cues plays the timeline as it is, then silence", () => {
    const t = new CallerTimeline(ramp(100), RATE);
    const out = play(t, 7, () => false);
    expect(Array.from(out.subarray(0, 800))).toEqual(Array.from(ramp(100)));
    expect(out.subarray(800).every((v) => v === 0)).toBe(true);
    expect(t.done).toBe(true);
    expect(t.holds).toEqual([]);
  });

  it("waits at a cue until the agent has been heard its time, playing the room back and forth", () => {
    const samples = ramp(2000);
    // The agent begins in frame 40 (800 ms); the cue at 500 ms wants 300 ms of it.
    const t = new CallerTimeline(samples, RATE, [{ atMs: 500, agentHeardMs: 300, fillFromMs: 300 }]);
    const out = play(t, 150, (k) => k >= 40);
    // Heard in frames 40..54 is 300 ms: the timeline goes on in frame 55, which hears frame 54.
    expect(t.holds).toEqual([{ atMs: 500, heldMs: (55 - 25) * 20 }]);
    const at = onStream(500, t.holds);
    expect(at).toBe(55 * 20);
    // Before the cue the timeline; from the cue on, the timeline again, later by the hold.
    expect(Array.from(out.subarray(0, 4000))).toEqual(Array.from(samples.subarray(0, 4000)));
    const resumed = (at * RATE) / 1000;
    // (after half a frame faded in from the room played meanwhile)
    expect(Array.from(out.subarray(resumed + 80, resumed + 4000))).toEqual(
      Array.from(samples.subarray(4080, 8000)),
    );
    const fade = out.subarray(resumed, resumed + 80);
    for (let i = 1; i < fade.length; i++) expect(fade[i]! >= fade[i - 1]!).toBe(true);
    // Meanwhile the 200 ms before the cue, walked back and forth: each step one sample on the timeline.
    const fill = out.subarray(4000, resumed);
    expect(fill.length).toBe(30 * FRAME);
    for (const v of fill) expect(v >= 2400 && v < 4000).toBe(true);
    for (let i = 1; i < fill.length; i++) expect(Math.abs(fill[i]! - fill[i - 1]!)).toBeLessThanOrEqual(1);
    expect(Math.abs(fill[0]! - out[3999]!)).toBeLessThanOrEqual(1);
  });

  it("may play a span of the room away from the cue, faded in from the timeline", () => {
    const samples = ramp(2000);
    const t = new CallerTimeline(samples, RATE, [
      { atMs: 500, agentHeardMs: 100, fillFromMs: 1500, fillToMs: 1700 },
    ]);
    const out = play(t, 60, (k) => k >= 40);
    // Held from frame 25 to 45 (it hears 100 ms of the agent in frames 40..44).
    expect(t.holds).toEqual([{ atMs: 500, heldMs: 400 }]);
    const fill = out.subarray(4000, 4000 + 20 * FRAME);
    // Its first 80 samples fade from the timeline's next (4000…) into the span (12000–13600).
    for (const v of fill.subarray(80)) expect(v >= 12000 && v < 13600).toBe(true);
    expect(Math.abs(fill[0]! - 4000)).toBeLessThan(200);
    expect(Array.from(out.subarray(7200 + 80, 8000))).toEqual(Array.from(samples.subarray(4080, 4800)));
  });

  it("plays on untouched through a cue the agent has already met", () => {
    const samples = ramp(400);
    const t = new CallerTimeline(samples, RATE, [{ atMs: 200, agentHeardMs: 100 }]);
    const out = play(t, 20, () => true);
    expect(t.holds).toEqual([{ atMs: 200, heldMs: 0 }]);
    expect(Array.from(out.subarray(0, samples.length))).toEqual(Array.from(samples));
  });

  it("counts the agent's time from its current stretch of speech, and goes on only while it is heard", () => {
    // Heard 200 ms (frames 10..19), quiet 1 s, then again from frame 70 with a 100 ms gap at 80..84.
    const heard = (k: number) => (k >= 10 && k < 20) || (k >= 70 && k < 80) || k >= 85;
    const t = new CallerTimeline(ramp(1000), RATE, [{ atMs: 100, agentHeardMs: 300 }]);
    play(t, 120, heard);
    // The second stretch (70 on, its short gap inside it) reaches 300 ms at frame 84, in its gap:
    // the timeline goes on at the first frame after one heard again.
    expect(t.holds).toEqual([{ atMs: 100, heldMs: (86 - 5) * 20 }]);
  });

  it("waits for the agent to have spoken and then been quiet its time", () => {
    // The greeting plays in frames 30..79; the cue at 200 ms wants it over for 400 ms.
    const t = new CallerTimeline(ramp(1000), RATE, [{ atMs: 200, agentQuietMs: 400 }]);
    play(t, 150, (k) => k >= 30 && k < 80);
    // Quiet from frame 80 on: 400 ms of it have passed in frame 100.
    expect(t.holds).toEqual([{ atMs: 200, heldMs: (100 - 10) * 20 }]);
  });

  it("goes on after its longest hold when the agent is never heard, and rejects a bad cue", () => {
    const t = new CallerTimeline(ramp(400), RATE, [{ atMs: 200, agentHeardMs: 100, maxHoldMs: 1000 }]);
    play(t, 100, () => false);
    expect(t.holds).toEqual([{ atMs: 200, heldMs: 1000 }]);
    expect(t.done).toBe(true);
    expect(() => new CallerTimeline(ramp(100), RATE, [{ atMs: -1, agentHeardMs: 0 }])).toThrow(/atMs/);
  });
});
