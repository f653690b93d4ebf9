import { describe, expect, it } from "vitest";
import { RtpLateness } from "../../bench/lib/rtp-lateness.ts";

describe("RtpLateness", () => {
  it("is zero for packets on their real-time schedule, and the delay of those behind it", () => {
    const l = new RtpLateness(8000);
    const delays = [0, 0, 3, 0, 12, 1, 0];
    for (const [i, d] of delays.entries()) l.add(1000 + 20 * i + d, 0xfffffe00 + 160 * i, 1);
    expect(l.latenessMs).toEqual(delays);
  });

  it("re-anchors on an early packet and on a new SSRC", () => {
    const l = new RtpLateness(8000);
    l.add(100, 0, 1);
    l.add(115, 160, 1); // 5 ms early: the schedule moves up
    l.add(140, 320, 1); // 5 ms behind the new schedule
    l.add(500, 777, 2); // a new stream
    l.add(520, 777 + 160, 2);
    expect(l.latenessMs).toEqual([0, 0, 5, 0, 0]);
    expect(l.streams).toBe(2);
  });

  it("reads timestamps in RTP clock units (Opus: 48 kHz)", () => {
    const l = new RtpLateness(48000);
    l.add(0, 0, 9);
    l.add(30, 960, 9);
    expect(l.latenessMs).toEqual([0, 10]);
  });

  it("counts holes: timestamps that skip past where the previous packet ended", () => {
    const l = new RtpLateness(8000);
    for (const [i, ts] of [0, 160, 320, 800, 960, 1120].entries()) l.add(i * 20, ts, 3, 160);
    l.add(200, 1120 + 160, 4, 160); // a new stream is not a hole
    l.add(220, 1440, 4, 160);
    expect(l.holes).toBe(1);
    expect(l.holeMs).toBe(40);
    const plain = new RtpLateness(8000);
    plain.add(0, 0, 1);
    plain.add(100, 4000, 1);
    expect(plain.holes).toBe(0);
  });
});
