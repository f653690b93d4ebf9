// The recording's timeline: caller frames by arrival on the clock (gaps as silence, late bursts
// absorbed, frames held from before it began taken as the call's start), agent audio at its playout position, cleared audio cut at the moment of the clear.
import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { resample } from "../../codecs/resample.ts";
import { RecordingTimeline } from "../../src/session/recording-timeline.ts";
import { splitStereo } from "../helpers/stereo.ts";

const RATE = 8000;
const FRAME = 160;

/** A frame whose every sample is `value` (so each frame's place is visible in the output). */
const frame = (value: number, n = FRAME) => new Int16Array(n).fill(value);

/** Sample index at `ms` on an 8 kHz timeline. */
const at = (ms: number) => (ms * RATE) / 1000;

/** Every distinct value in `pcm[from, to)`. */
const valuesIn = (pcm: Int16Array, from: number, to: number) => [...new Set(pcm.subarray(from, to))];

/** The first `count` frames of `left` are frames 0, 1, 2… (value k+1), each at its own place. */
function framesInOrder(left: Int16Array, count: number): void {
  for (let k = 0; k < count; k++) expect(valuesIn(left, k * FRAME, (k + 1) * FRAME)).toEqual([k + 1]);
}

describe("RecordingTimeline", () => {
  it("lays caller frames end to end and agent audio from when it is played", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    const out: Int16Array[] = [];
    // Frame k (value k+1) arrives as it ends: at 20 (k+1) ms.
    for (let k = 0; k < 50; k++) {
      t.caller(frame(k + 1), 20 * (k + 1));
      if (k === 4) t.agent(frame(-7, at(300)), 100);
      if (k === 24) out.push(t.take(500));
    }
    out.push(t.finish(1000));
    const { left, right } = splitStereo(concatPcm(out));
    expect(left.length).toBe(at(1000));
    framesInOrder(left, 50);
    expect(valuesIn(right, 0, at(100))).toEqual([0]);
    expect(valuesIn(right, at(100), at(400))).toEqual([-7]);
    expect(valuesIn(right, at(400), at(1000))).toEqual([0]);
  });

  it("queues agent audio played while earlier audio is still playing behind it", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    t.agent(frame(1, at(200)), 0);
    t.agent(frame(2, at(200)), 50); // heard once the first has played: 200-400 ms
    t.agent(frame(3, at(100)), 600); // the queue ran dry at 400 ms: heard from 600 ms
    const { right } = splitStereo(t.finish(800));
    expect(valuesIn(right, 0, at(200))).toEqual([1]);
    expect(valuesIn(right, at(200), at(400))).toEqual([2]);
    expect(valuesIn(right, at(400), at(600))).toEqual([0]);
    expect(valuesIn(right, at(600), at(700))).toEqual([3]);
    expect(valuesIn(right, at(700), at(800))).toEqual([0]);
  });

  it("leaves out agent audio dropped by clear(), cutting at the moment of the clear", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    t.agent(frame(1, at(600)), 0);
    t.agent(frame(2, at(600)), 10); // queued behind: would have played 600-1200 ms
    const first = t.take(250); // part of the first reply goes out before the clear
    t.clearAgent(400);
    t.agent(frame(3, at(200)), 700); // the next reply, after the barge-in
    const { right } = splitStereo(concatPcm([first, t.finish(1500)]));
    expect(right.length).toBe(at(1500));
    expect(valuesIn(right, 0, at(400))).toEqual([1]);
    expect(valuesIn(right, at(400), at(700))).toEqual([0]);
    expect(valuesIn(right, at(700), at(900))).toEqual([3]);
    expect(valuesIn(right, at(900), at(1500))).toEqual([0]);
    expect(right.includes(2)).toBe(false);
  });

  it("cuts the agent's queued audio at the end of the call", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    t.agent(frame(5, at(2000)), 100);
    const { right } = splitStereo(t.finish(700));
    expect(right.length).toBe(at(700));
    expect(valuesIn(right, at(100), at(700))).toEqual([5]);
  });

  it("fills a gap of missing caller frames with silence, placing the next frame by the clock", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    for (let k = 0; k < 10; k++) t.caller(frame(k + 1), 20 * (k + 1)); // 0-200 ms
    t.caller(frame(11), 600); // frames lost: this one ended at 600 ms
    t.caller(frame(12), 620);
    // Jitter below the gap threshold (100 ms) is not a gap: the frame follows on.
    t.caller(frame(13), 720);
    const { left } = splitStereo(t.finish(800));
    expect(valuesIn(left, 0, at(200))).toEqual([...Array(10).keys()].map((k) => k + 1));
    expect(valuesIn(left, at(200), at(580))).toEqual([0]);
    expect(valuesIn(left, at(580), at(600))).toEqual([11]);
    expect(valuesIn(left, at(600), at(620))).toEqual([12]);
    expect(valuesIn(left, at(620), at(640))).toEqual([13]);
    expect(valuesIn(left, at(640), at(800))).toEqual([0]);
  });

  it("absorbs a burst of late frames after a stall instead of running ahead of the clock", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    for (let k = 0; k < 10; k++) t.caller(frame(k + 1), 20 * (k + 1));
    // A 400 ms stall over TCP: frames 10-29 (200-600 ms) all arrive at 600 ms, none lost.
    for (let k = 10; k < 30; k++) t.caller(frame(k + 1), 600);
    for (let k = 30; k < 40; k++) t.caller(frame(k + 1), 20 * (k + 1));
    const { left } = splitStereo(t.finish(800));
    framesInOrder(left, 40);
    expect(t.droppedCallerSamples).toBe(0);
  });

  it("drops caller audio that would run more than maxAheadMs ahead of the clock", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE, maxAheadMs: 200 });
    for (let k = 0; k < 5; k++) t.caller(frame(1), 20 * (k + 1));
    const first = t.take(100);
    expect(first.length / 2).toBe(at(100));
    for (let k = 0; k < 50; k++) t.caller(frame(k + 2), 100); // then a second of audio at once
    const { left } = splitStereo(concatPcm([first, t.finish(1100)]));
    // 200 ms (10 frames) fit ahead of the clock at 100 ms; the rest went.
    expect(t.droppedCallerSamples).toBe(40 * FRAME);
    for (let k = 0; k < 10; k++)
      expect(valuesIn(left, at(100) + k * FRAME, at(100) + (k + 1) * FRAME)).toEqual([k + 2]);
    expect(valuesIn(left, at(300), at(1100))).toEqual([0]);
  });

  it("takes caller frames held from before it began as the call's start, for both channels", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    // The session attached 300 ms into the call: 15 frames at once, then one every 20 ms.
    for (let k = 0; k < 15; k++) t.caller(frame(k + 1), 0);
    // The greeting 40 ms later: after the 17th frame of the call, not over its first.
    for (let k = 15; k < 17; k++) t.caller(frame(k + 1), 20 * (k - 14));
    t.agent(frame(-7, at(200)), 40);
    for (let k = 17; k < 40; k++) t.caller(frame(k + 1), 20 * (k - 14));
    const { left, right } = splitStereo(t.finish(500));
    expect(t.droppedCallerSamples).toBe(0);
    expect(left.length).toBe(at(800));
    framesInOrder(left, 40);
    expect(valuesIn(right, 0, at(340))).toEqual([0]);
    expect(valuesIn(right, at(340), at(540))).toEqual([-7]);
    expect(valuesIn(right, at(540), at(800))).toEqual([0]);
  });

  it("takes two members' frames held from before it began as ending together, when it began", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    // Attached 300 ms into the conversation: Bob had spoken 100-300 ms, Ann 0-300 ms; Bob's come first.
    for (let k = 0; k < 10; k++) t.caller(frame(10), 0, "bob");
    for (let k = 0; k < 15; k++) t.caller(frame(100), 0, "ann");
    t.agent(frame(-7, at(100)), 20);
    const { left, right } = splitStereo(t.finish(100));
    expect(t.droppedCallerSamples).toBe(0);
    expect(left.length).toBe(at(400));
    expect(valuesIn(left, 0, at(100))).toEqual([100]);
    expect(valuesIn(left, at(100), at(300))).toEqual([110]);
    expect(valuesIn(left, at(300), at(400))).toEqual([0]);
    expect(valuesIn(right, 0, at(320))).toEqual([0]);
    expect(valuesIn(right, at(320), at(400))).toEqual([-7]);
  });

  it("mixes speakers who talk at once (a Discord channel), each laid by the clock, none dropped", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
    const out: Int16Array[] = [];
    // Ann speaks 0-400 ms; Bob from 200 to 600 ms, over her; each member's frames come every 20 ms.
    for (let k = 0; k < 20; k++) t.caller(frame(100), 20 * (k + 1), "ann");
    for (let k = 10; k < 30; k++) t.caller(frame(10), 20 * (k + 1), "bob");
    out.push(t.take(1200));
    // Ann again at 2 s, after both went quiet (neither sends anything then).
    for (let k = 100; k < 110; k++) t.caller(frame(100), 20 * (k + 1), "ann");
    out.push(t.finish(2400));
    const { left } = splitStereo(concatPcm(out));
    expect(t.droppedCallerSamples).toBe(0);
    expect(left.length).toBe(at(2400));
    expect(valuesIn(left, 0, at(200))).toEqual([100]);
    expect(valuesIn(left, at(200), at(400))).toEqual([110]);
    expect(valuesIn(left, at(400), at(600))).toEqual([10]);
    expect(valuesIn(left, at(600), at(2000))).toEqual([0]);
    expect(valuesIn(left, at(2000), at(2200))).toEqual([100]);
    expect(valuesIn(left, at(2200), at(2400))).toEqual([0]);
  });

  it("hands out only what is settled: caller audio as it comes, silence once holdMs has passed", () => {
    const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE, holdMs: 500 });
    for (let k = 0; k < 10; k++) t.caller(frame(1), 20 * (k + 1));
    t.agent(frame(2, at(1000)), 0);
    // Caller frames up to 200 ms; the agent is settled up to now.
    expect(t.take(200).length / 2).toBe(at(200));
    // No caller frames since 200 ms: at 600 ms none of the silence is sure yet, at 800 ms 100 ms.
    expect(t.take(600).length).toBe(0);
    expect(t.take(800).length / 2).toBe(at(100));
    expect(t.take(1200).length / 2).toBe(at(400));
    expect(t.takenSamples).toBe(at(700));
    expect(t.finish(1300).length / 2).toBe(at(600));
    // Nothing after the end.
    expect(t.take(2000).length).toBe(0);
    expect(t.finish(2000).length).toBe(0);
  });

  it("gives the same recording however often it is taken", () => {
    const run = (takeEvery: number) => {
      const t = new RecordingTimeline({ callerRate: RATE, agentRate: RATE });
      const parts: Int16Array[] = [];
      for (let ms = 20; ms <= 3000; ms += 20) {
        if (ms < 1000 || ms > 1600) t.caller(frame((ms / 20) % 100), ms);
        if (ms === 300) t.agent(frame(9, at(900)), ms);
        if (ms === 700) t.clearAgent(ms);
        if (ms === 900) t.agent(frame(8, at(400)), ms);
        if (ms === 940) t.agent(frame(7, at(400)), ms);
        if (ms % takeEvery === 0) parts.push(t.take(ms));
      }
      parts.push(t.finish(3000));
      return concatPcm(parts);
    };
    const once = run(100_000);
    expect(once.length).toBe(2 * at(3000));
    expect(run(20)).toEqual(once);
    expect(run(1000)).toEqual(once);
    expect(run(340)).toEqual(once);
  });

  it("resamples the agent to the caller's rate with one continuous stream (no seams)", () => {
    // Caller at 16 kHz, agent at 8 kHz: the right channel must equal the whole 8 kHz agent
    // channel (silence included) converted in one go, however it was played and taken.
    const t = new RecordingTimeline({ callerRate: 16000, agentRate: 8000 });
    const sine = (n: number, hz: number) =>
      Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / 8000)));
    const a = sine(at(300), 440);
    const b = sine(at(200), 1000);
    const c = sine(at(400), 700);
    const parts: Int16Array[] = [];
    t.agent(a, 100); // 100-400 ms
    t.agent(b, 150); // queued behind: 400-600 ms
    parts.push(t.take(333));
    parts.push(t.take(517));
    t.clearAgent(550); // b cut at 550 ms
    t.agent(c, 800); // 800-1200 ms
    parts.push(t.take(1000));
    parts.push(t.finish(1500));
    const { right } = splitStereo(concatPcm(parts));
    expect(right.length).toBe(24000);
    const agent8k = new Int16Array(at(1500));
    agent8k.set(a, at(100));
    agent8k.set(b.subarray(0, at(150)), at(400));
    agent8k.set(c, at(800));
    expect(right).toEqual(resample(agent8k, 8000, 16000));
  });
});
