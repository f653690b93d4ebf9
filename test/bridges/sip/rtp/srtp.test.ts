// libsrtp2 through the RTP addon: what one side protects the other unprotects with the same SDES
// key (both suites); a replayed, tampered or wrongly keyed packet is refused; the rollover
// counter carries a stream across the 16-bit sequence wrap.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { rtpSender } from "../../../../bridges/sip/rtp/native-sender.ts";
import { buildRtp } from "../../../../bridges/sip/rtp/rtp-packet.ts";

const addon = rtpSender();

function packet(sequence: number, payload: Uint8Array): Buffer {
  const plain = buildRtp({
    payloadType: 0,
    sequence,
    timestamp: sequence * 160,
    ssrc: 0x1234,
    payload,
    marker: false,
  });
  const buf = Buffer.alloc(plain.length + 16);
  Buffer.from(plain).copy(buf);
  return buf;
}

describe.each([80, 32] as const)("SRTP AES_CM_128_HMAC_SHA1_%i", (tagBits) => {
  it("round-trips, and refuses replays, tampering and another key", () => {
    const key = randomBytes(30);
    const tx = addon.srtpOutbound(key, tagBits);
    const rx = addon.srtpInbound(key, tagBits);
    const payload = Buffer.alloc(160, 0xff);
    const buf = packet(1000, payload);
    const n = addon.srtpProtect(tx, buf, 12 + 160);
    expect(n).toBe(12 + 160 + tagBits / 8);
    const wire = Buffer.from(buf.subarray(0, n));
    expect(wire.subarray(12, 172).equals(payload)).toBe(false); // not in clear
    const copy = Buffer.from(wire);
    expect(addon.srtpUnprotect(rx, wire)).toBe(172);
    expect(wire.subarray(12, 172).equals(payload)).toBe(true);
    expect(addon.srtpUnprotect(rx, copy)).toBeLessThan(0); // replayed
    const next = packet(1001, payload);
    const m = addon.srtpProtect(tx, next, 172);
    const tampered = Buffer.from(next.subarray(0, m));
    tampered[20]! ^= 1;
    expect(addon.srtpUnprotect(rx, tampered)).toBeLessThan(0);
    const stranger = addon.srtpInbound(randomBytes(30), tagBits);
    expect(addon.srtpUnprotect(stranger, Buffer.from(next.subarray(0, m)))).toBeLessThan(0);
  });

  it("keeps a stream across the sequence number wrap (rollover counter)", () => {
    const key = randomBytes(30);
    const tx = addon.srtpOutbound(key, tagBits);
    const rx = addon.srtpInbound(key, tagBits);
    for (let i = 0; i < 40; i++) {
      const seq = (65_520 + i) & 0xffff;
      const buf = packet(seq, Buffer.alloc(160, i));
      const n = addon.srtpProtect(tx, buf, 172);
      expect(addon.srtpUnprotect(rx, buf.subarray(0, n)), `sequence ${seq}`).toBe(172);
    }
  });

  it("refuses bad keys and short buffers without throwing from the send path", () => {
    expect(() => addon.srtpInbound(randomBytes(16), tagBits)).toThrow(/30 bytes/);
    const tx = addon.srtpOutbound(randomBytes(30), tagBits);
    expect(addon.srtpProtect(tx, Buffer.alloc(172), 172)).toBeLessThan(0); // no room for the tag
    const rx = addon.srtpInbound(randomBytes(30), tagBits);
    expect(addon.srtpUnprotect(rx, Buffer.alloc(5))).toBeLessThan(0);
  });
});
