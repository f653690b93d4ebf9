import { describe, expect, it } from "vitest";
import { Pacer } from "../../bridges/pacer.ts";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import { VirtualClock } from "../../src/core/clock.ts";

interface Sent {
  at: number;
  samples: number;
  drained: boolean;
  data: Int16Array;
  buffer: Int16Array;
}

function rig(clock: Clock, leadMs = 200) {
  const sent: Sent[] = [];
  const pacer = new Pacer({
    clock,
    frameSamples: 160,
    leadMs,
    send: (frame, samples, drained) =>
      sent.push({ at: clock.now(), samples, drained, data: frame.slice(), buffer: frame }),
  });
  return { pacer, sent };
}

function ramp(n: number, from = 0): Int16Array {
  const a = new Int16Array(n);
  for (let i = 0; i < n; i++) a[i] = (from + i) % 30000;
  return a;
}

/** A clock whose timers fire late by a varying amount, as an event loop under load does. */
class LateClock implements Clock {
  readonly inner = new VirtualClock();
  readonly maxLateMs: number;
  #n = 0;
  constructor(maxLateMs: number) {
    this.maxLateMs = maxLateMs;
  }
  now(): number {
    return this.inner.now();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    this.#n = (this.#n * 1103515245 + 12345) & 0x7fffffff;
    return this.inner.setTimeout(fn, ms + (this.#n % (this.maxLateMs + 1)));
  }
  clearTimeout(h: TimerHandle | undefined): void {
    this.inner.clearTimeout(h);
  }
}

describe("Pacer", () => {
  it("sends the lead at once, then one frame per frame period", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    pacer.push(ramp(50 * 160));
    expect(sent.length).toBe(10);
    expect(pacer.aheadMs).toBe(200);
    for (let t = 1; t <= 1000; t++) {
      clock.advance(1);
      expect(sent.length).toBe(Math.min(50, 10 + Math.floor(t / 20)));
      expect(pacer.aheadMs).toBeLessThanOrEqual(200);
    }
    expect(sent.map((s) => s.at).slice(9, 13)).toEqual([0, 20, 40, 60]);
    expect(sent.at(-1)!.drained).toBe(true);
    expect(sent.slice(0, -1).every((s) => !s.drained)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it("hands out exactly the pushed samples, in order, across any chunking, in one reused buffer", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    const input = ramp(160 * 37 + 55);
    let pos = 0;
    let seed = 7;
    while (pos < input.length) {
      seed = (seed * 48271) % 2147483647;
      const n = Math.min(input.length - pos, 1 + (seed % 700));
      pacer.push(input.subarray(pos, pos + n));
      pos += n;
      clock.advance(seed % 15);
    }
    clock.advance(2000);
    const out = new Int16Array(input.length);
    let o = 0;
    for (const s of sent) {
      out.set(s.data.subarray(0, s.samples), o);
      o += s.samples;
      expect(s.data.subarray(s.samples).every((v) => v === 0)).toBe(true);
    }
    expect(o).toBe(input.length);
    expect(out).toEqual(input);
    expect(new Set(sent.map((s) => s.buffer)).size).toBe(1);
  });

  it("keeps every sample in order while its queue wraps, grows past 8 s and drains between replies", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    const input = ramp(160 * 2000 + 77);
    let pos = 0;
    let seed = 11;
    let drains = 0;
    while (pos < input.length) {
      seed = (seed * 48271) % 2147483647;
      // Mostly TTS-sized chunks, now and then a whole reply of 10 s at once (the queue grows).
      const n = Math.min(input.length - pos, seed % 13 === 0 ? 80_000 : 1 + (seed % 3000));
      pacer.push(input.subarray(pos, pos + n));
      pos += n;
      if (seed % 17 === 0) {
        clock.advance(20_000); // the reply plays out: the queue drains
        expect(pacer.queuedSamples).toBe(0);
        drains++;
      } else clock.advance(seed % 90);
    }
    clock.advance(60_000);
    expect(drains).toBeGreaterThan(2);
    const out = new Int16Array(input.length);
    let o = 0;
    for (const s of sent) {
      out.set(s.data.subarray(0, s.samples), o);
      o += s.samples;
    }
    expect(o).toBe(input.length);
    expect(out).toEqual(input);
  });

  it("copies what is pushed, so the caller may reuse its buffer", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock, 20);
    const buf = ramp(480);
    pacer.push(buf);
    buf.fill(-1);
    clock.advance(100);
    expect(sent.map((s) => s.data[0])).toEqual([0, 160, 320]);
  });

  it("holds a partial frame one frame past its slot for the rest of its audio, then sends it padded", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    pacer.push(ramp(10 * 160 + 10));
    expect(sent.length).toBe(10);
    clock.advance(30);
    expect(sent.length).toBe(10);
    pacer.push(ramp(150, 1610));
    expect(sent.length).toBe(11);
    expect(sent[10]!.samples).toBe(160);
    expect(sent[10]!.data[9]).toBe(1609);
    expect(sent[10]!.data[10]).toBe(1610);

    pacer.push(ramp(30));
    clock.advance(29);
    expect(sent.length).toBe(11);
    clock.advance(1);
    // At t=60 the far side holds 160 ms: a full frame would have gone 20 ms ago; the partial goes
    // out padded, with most of the lead still ahead of it.
    expect(sent.length).toBe(12);
    expect(sent[11]!.at).toBe(60);
    expect(sent[11]!.samples).toBe(30);
    expect(sent[11]!.drained).toBe(true);
    expect(pacer.aheadMs).toBe(180);
  });

  it("with batchFrames 2 wakes every 40 ms, sends two frames, and flushes once per wake-up", () => {
    const clock = new VirtualClock();
    const sent: number[] = [];
    const flushes: Array<{ at: number; frames: number }> = [];
    const pacer = new Pacer({
      clock,
      frameSamples: 160,
      leadMs: 200,
      batchFrames: 2,
      send: () => sent.push(clock.now()),
      flush: () => flushes.push({ at: clock.now(), frames: sent.length }),
    });
    pacer.push(ramp(30 * 160 + 50));
    expect(sent.length).toBe(10);
    clock.advance(39);
    expect(sent.length).toBe(10);
    clock.advance(1);
    expect(sent.length).toBe(12);
    clock.advance(40);
    expect(sent.length).toBe(14);
    expect(flushes).toEqual([
      { at: 0, frames: 10 },
      { at: 40, frames: 12 },
      { at: 80, frames: 14 },
    ]);
    // Never more than the lead ahead, and the far side never runs dry.
    clock.advance(1000);
    expect(sent.length).toBe(31);
    for (let i = 0; i < 30; i++) {
      expect(sent[i]!).toBeLessThanOrEqual(i * 20); // frame i plays at i × 20 ms
      expect(sent[i]!).toBeGreaterThanOrEqual(i * 20 - 200);
    }
  });

  it("catches up after late timers: the far side never runs dry and never holds more than the lead", () => {
    const clock = new LateClock(70);
    const { pacer, sent } = rig(clock);
    const frames = 200;
    pacer.push(ramp(frames * 160));
    let maxAhead = 0;
    for (let t = 0; t < frames * 20 + 500; t += 3) {
      clock.inner.advance(3);
      maxAhead = Math.max(maxAhead, pacer.aheadMs);
    }
    expect(sent.length).toBe(frames);
    expect(maxAhead).toBeLessThanOrEqual(200);
    // Frame k plays at 20·k ms after the first one went out; it must have been sent by then.
    const t0 = sent[0]!.at;
    sent.forEach((s, k) => {
      expect(s.at).toBeLessThanOrEqual(t0 + 20 * k);
    });
    expect(pacer.stats.catchUps).toBeGreaterThan(0);
    expect(pacer.stats.maxLateMs).toBeGreaterThan(20);
  });

  it("restarts the far-side model after an underrun (a pause between utterances)", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    pacer.push(ramp(3 * 160));
    expect(sent.length).toBe(3);
    clock.advance(1000);
    expect(pacer.aheadMs).toBe(0);
    pacer.push(ramp(20 * 160));
    expect(sent.length).toBe(13);
    expect(pacer.aheadMs).toBe(200);
  });

  it("clear drops the unsent queue and the far-side backlog; close stops it for good", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock);
    pacer.push(ramp(40 * 160));
    clock.advance(100);
    expect(sent.length).toBe(15);
    expect(pacer.clear()).toBe(25 * 160);
    expect(pacer.queuedSamples).toBe(0);
    expect(pacer.aheadMs).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    clock.advance(1000);
    expect(sent.length).toBe(15);
    pacer.push(ramp(12 * 160));
    expect(sent.length).toBe(25);
    pacer.close();
    pacer.push(ramp(160));
    clock.advance(1000);
    expect(sent.length).toBe(25);
    expect(clock.pendingTimers).toBe(0);
  });

  it("clear(true) drops the unsent queue but keeps the far side's backlog (RTP cannot call it back)", () => {
    const clock = new VirtualClock();
    const { pacer, sent } = rig(clock, 60);
    pacer.push(ramp(20 * 160));
    expect(sent.length).toBe(3);
    clock.advance(10);
    expect(pacer.clear(true)).toBe(17 * 160);
    expect(pacer.aheadMs).toBe(50);
    // The next audio waits behind what the far side still holds: one frame tops it up to the lead.
    pacer.push(ramp(5 * 160));
    expect(sent.length).toBe(3);
    clock.advance(10);
    expect(sent.length).toBe(4);
    expect(pacer.aheadMs).toBe(60);
  });
});
