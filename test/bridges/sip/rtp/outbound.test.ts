import { afterEach, describe, expect, it } from "vitest";
import { RtpLateness } from "../../../../bench/lib/rtp-lateness.ts";
import { RTP_LEAD_MS, RtpOutbound } from "../../../../bridges/sip/rtp/outbound.ts";
import { UdpRtpPortPool } from "../../../../bridges/sip/rtp/port-pool.ts";
import { RtpSender } from "../../../../bridges/sip/rtp/sender.ts";
import type { Clock, TimerHandle } from "../../../../src/session/clock.ts";
import { VirtualClock } from "../../../../src/session/clock.ts";
import { freeEvenRange } from "./ports.ts";
import { Peer, until } from "./rig.ts";
import { sine } from "./tone.ts";

/** Virtual time whose next timer can be made to fire late, as a stalled event loop does. */
class StallClock implements Clock {
  readonly inner = new VirtualClock(1000);
  stallNextMs = 0;
  now(): number {
    return this.inner.now();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const extra = this.stallNextMs;
    this.stallNextMs = 0;
    return this.inner.setTimeout(fn, ms + extra);
  }
  clearTimeout(h: TimerHandle | undefined): void {
    this.inner.clearTimeout(h);
  }
}

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

/** An outbound stream on a real socket; every transmitted packet's virtual send time is kept, in order. */
async function rig() {
  const base = await freeEvenRange(1);
  const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base}` });
  const endpoint = await pool.openUdp();
  const peer = await Peer.open();
  cleanup.push(
    () => endpoint.close(),
    () => peer.close(),
  );
  const clock = new StallClock();
  const sender = new RtpSender(endpoint.socket, 0, { address: "127.0.0.1", port: peer.port });
  const sentAt: number[] = [];
  const send = sender.sendPayload.bind(sender);
  sender.sendPayload = (payload, ticks, marker, transmit) => {
    if (transmit) sentAt.push(clock.now());
    send(payload, ticks, marker, transmit);
  };
  const played: number[] = [];
  const out = new RtpOutbound({
    clock,
    codec: "pcmu",
    sender,
    transmitting: () => true,
    played: (ms) => played.push(ms),
  });
  cleanup.push(() => out.close());
  /** Lateness of each packet against its timestamp, by its virtual send time. */
  const lateness = async () => {
    await until(() => peer.received.length === sentAt.length, "every packet at the peer");
    const l = new RtpLateness(8000);
    peer.received.forEach((p, i) => {
      l.add(sentAt[i]!, p.timestamp, p.ssrc);
    });
    return l.latenessMs;
  };
  return { clock, out, peer, sentAt, played, lateness };
}

describe("RtpOutbound", () => {
  it("keeps one unbroken timeline through silence, replies and a barge-in clear", async () => {
    const r = await rig();
    r.out.start();
    r.clock.inner.advance(110);
    r.out.play(sine(440, 8000, 4000, 5000)); // 500 ms
    r.clock.inner.advance(250);
    r.out.clear();
    expect(r.out.queuedMs()).toBe(r.out.playedMs());
    r.clock.inner.advance(97);
    r.out.play(sine(440, 8000, 1000, 5000)); // 125 ms: a partial last frame
    r.clock.inner.advance(500);
    const late = await r.lateness();
    // Every packet goes out within the lead of its slot: never behind the stream's own clock
    // (a packet sent just in time shows the lead less one frame against those sent earliest).
    expect(Math.max(...late)).toBeLessThanOrEqual(RTP_LEAD_MS - 20);
    const got = r.peer.received;
    for (let i = 1; i < got.length; i++) {
      expect(got[i]!.sequence).toBe((got[i - 1]!.sequence + 1) & 0xffff);
      expect(got[i]!.timestamp).toBe((got[i - 1]!.timestamp + 160) >>> 0);
    }
    // The first packet, and the first of each reply.
    expect(got.filter((p) => p.marker)).toHaveLength(3);
    expect(r.out.stats.underruns).toBe(0);
    // The second reply was heard whole, and the session was told.
    expect(r.played.at(-1)).toBe(r.out.queuedMs());
  });

  it("after a stalled timer, skips the lost time in the timestamp (marker set) instead of running late for good", async () => {
    const r = await rig();
    r.out.start();
    r.out.play(sine(300, 8000, 8000, 5000)); // 1 s
    r.clock.inner.advance(200);
    r.clock.stallNextMs = RTP_LEAD_MS + 15; // longer than the lead: the caller ran dry
    r.clock.inner.advance(800);
    const late = await r.lateness();
    expect(r.out.stats.underruns).toBe(1);
    const after = r.peer.received.findIndex((p, i) => i > 2 && p.marker);
    expect(after).toBeGreaterThan(10);
    // The packets after the stall are back on schedule: the lost time is not carried on.
    expect(Math.max(...late.slice(after))).toBeLessThanOrEqual(RTP_LEAD_MS - 20);
    expect(Math.max(...late.slice(-10))).toBe(0);
    const gap = (r.peer.received[after]!.timestamp - r.peer.received[after - 1]!.timestamp) >>> 0;
    expect(gap).toBeGreaterThan(160);
  });
});
