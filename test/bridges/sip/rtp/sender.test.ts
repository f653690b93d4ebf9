import { afterEach, describe, expect, it } from "vitest";
import { UdpRtpPortPool } from "../../../../bridges/sip/rtp/port-pool.ts";
import { RtpSender } from "../../../../bridges/sip/rtp/sender.ts";
import { freeEvenRange } from "./ports.ts";
import { Peer, until } from "./rig.ts";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

describe("RtpSender", () => {
  it("sends a burst longer than its buffer ring intact: each datagram leaves before its buffer is reused", async () => {
    const base = await freeEvenRange(1);
    const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base}` });
    const endpoint = await pool.openUdp();
    cleanup.push(() => endpoint.close());
    const peer = await Peer.open();
    cleanup.push(() => peer.close());
    const sender = new RtpSender(endpoint.socket, 0, { address: "127.0.0.1", port: peer.port });
    for (let i = 0; i < 40; i++) sender.sendPayload(new Uint8Array(160).fill(i), 160, i === 0, true);
    await until(() => peer.received.length === 40, "40 packets");
    const got = [...peer.received].sort(
      (a, b) =>
        ((a.sequence - peer.received[0]!.sequence) & 0xffff) -
        ((b.sequence - peer.received[0]!.sequence) & 0xffff),
    );
    expect(got.map((p) => p.payload[0])).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(got.map((p) => p.payload.every((b) => b === p.payload[0]))).not.toContain(false);
    expect(got[0]!.marker).toBe(true);
    expect(got.slice(1).some((p) => p.marker)).toBe(false);
    expect(got.every((p, i) => p.timestamp === (got[0]!.timestamp + 160 * i) >>> 0)).toBe(true);
  });

  it("advances the timestamp but not the sequence while not transmitting, and re-latches on a new SDP address", async () => {
    const base = await freeEvenRange(1);
    const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base}` });
    const endpoint = await pool.openUdp();
    cleanup.push(() => endpoint.close());
    const a = await Peer.open();
    const b = await Peer.open();
    cleanup.push(
      () => a.close(),
      () => b.close(),
    );
    const sender = new RtpSender(endpoint.socket, 8, { address: "127.0.0.1", port: 9 });
    expect(sender.latch("127.0.0.1", a.port)).toBe(true);
    expect(sender.latch("127.0.0.1", b.port)).toBe(false);
    sender.sendPayload(Uint8Array.of(1), 160, false, true);
    sender.sendPayload(Uint8Array.of(2), 160, false, false);
    sender.sendPayload(Uint8Array.of(3), 160, false, true);
    await until(() => a.received.length === 2, "two packets at the latched address");
    expect(a.received[1]!.sequence).toBe((a.received[0]!.sequence + 1) & 0xffff);
    expect(a.received[1]!.timestamp).toBe((a.received[0]!.timestamp + 320) >>> 0);
    sender.update(8, { address: "127.0.0.1", port: b.port });
    expect(sender.latched).toBe(false);
    sender.sendPayload(Uint8Array.of(4), 160, false, true);
    await until(() => b.received.length === 1, "the packet at the new address");
  });
});
