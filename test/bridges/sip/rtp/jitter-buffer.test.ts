import { describe, expect, it } from "vitest";
import { JitterBuffer } from "../../../../bridges/sip/rtp/jitter-buffer.ts";
import { VirtualClock } from "../../../../src/core/clock.ts";

type Out = number | `lost ${number}` | "resync";

/** A buffer at 8 kHz whose payloads are one byte naming the packet, and what it released. */
function rig(windowMs = 60) {
  const clock = new VirtualClock();
  const out: Out[] = [];
  const timestamps: number[] = [];
  const jb = new JitterBuffer({
    clock,
    clockRate: 8000,
    windowMs,
    sink: {
      packet: (p, ts) => {
        out.push(p[0]!);
        timestamps.push(ts);
      },
      lost: (n) => out.push(`lost ${n}`),
      resync: () => out.push("resync"),
    },
  });
  /** Packet `i` of a stream starting at sequence `seq0`, timestamp `ts0`, 20 ms each. */
  const push = (i: number, seq0 = 100, ts0 = 5000, ssrc = 1) =>
    jb.push(ssrc, (seq0 + i) & 0xffff, (ts0 + i * 160) >>> 0, Uint8Array.of(i & 0xff));
  return { clock, jb, out, timestamps, push };
}

describe("JitterBuffer", () => {
  it("passes an orderly stream straight through", () => {
    const r = rig();
    for (let i = 0; i < 10; i++) r.push(i);
    expect(r.out).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(r.jb.holding).toBe(0);
  });

  it("puts reordered packets back in order within the window", () => {
    const r = rig();
    for (const i of [0, 2, 1, 3, 5, 4, 6]) r.push(i);
    expect(r.out).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.jb.stats.lost).toBe(0);
  });

  it("drops duplicates, whether released or still held", () => {
    const r = rig();
    for (const i of [0, 1, 1, 3, 3, 2, 0]) r.push(i);
    expect(r.out).toEqual([0, 1, 2, 3]);
    expect(r.jb.stats.duplicates).toBe(3);
    expect(r.jb.stats.late).toBe(0);
  });

  it("declares a gap lost once the packets behind it span the window, and drops the straggler as late", () => {
    const r = rig(60);
    for (const i of [0, 1, 3, 4, 5]) r.push(i);
    // 3 and 4 wait (40 ms of stream past 1); 5 makes it 80 ms: packet 2 is given up.
    expect(r.out).toEqual([0, 1, "lost 1", 3, 4, 5]);
    r.push(2);
    expect(r.jb.stats.late).toBe(1);
    expect(r.out).toHaveLength(6);
  });

  it("gives up on a gap after the window on the clock when nothing else arrives", () => {
    const r = rig(60);
    r.push(0);
    r.push(3);
    expect(r.out).toEqual([0]);
    r.clock.advance(59);
    expect(r.out).toEqual([0]);
    r.clock.advance(1);
    expect(r.out).toEqual([0, "lost 2", 3]);
    expect(r.clock.pendingTimers).toBe(0);
  });

  it("unwraps the 16-bit sequence and the 32-bit timestamp", () => {
    const r = rig();
    for (const i of [0, 1, 3, 2, 4, 5, 6]) r.push(i, 0xfffd, 0xfffffe00);
    expect(r.out).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const steps = r.timestamps.slice(1).map((t, i) => t - r.timestamps[i]!);
    expect(steps).toEqual([160, 160, 160, 160, 160, 160]);
  });

  it("resyncs on a new SSRC, releasing what the old stream left", () => {
    const r = rig();
    r.push(0);
    r.push(2); // held behind the missing 1
    r.push(0, 40000, 9, 2);
    r.push(1, 40000, 9, 2);
    expect(r.out).toEqual([0, "lost 1", 2, "resync", 0, 1]);
    expect(r.jb.stats.resyncs).toBe(1);
  });

  it("treats a jump of thousands of packets as a restarted stream, not a loss", () => {
    const r = rig();
    r.push(0);
    r.push(1);
    r.push(20000);
    r.push(20001);
    expect(r.out).toEqual([0, 1, "resync", 20000 & 0xff, 20001 & 0xff]);
    expect(r.jb.stats.lost).toBe(0);
  });
});
