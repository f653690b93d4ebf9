import { describe, expect, it } from "vitest";
import {
  buildRtp,
  emptyRtpHeader,
  parseRtp,
  random16,
  random32,
} from "../../../../bridges/sip/rtp/rtp-packet.ts";
import { seededBytes } from "../../../helpers/noise.ts";

describe("RTP packets", () => {
  it("round-trips every header field, with CSRCs, an extension and padding skipped", () => {
    const payload = seededBytes(160, 7);
    const cases = [
      {},
      { csrcs: [1, 0xffffffff, 42] },
      { extension: { profile: 0xbede, data: seededBytes(8, 3) } },
      { padding: 4 },
      { csrcs: [5], extension: { profile: 1, data: new Uint8Array(0) }, padding: 1 },
    ];
    for (const [i, extra] of cases.entries()) {
      const fields = {
        marker: i % 2 === 0,
        payloadType: 96 + i,
        sequence: 0xffff - i,
        timestamp: 0xfffffff0 + i,
        ssrc: 0x80000000 + i,
        payload,
        ...extra,
      };
      const bytes = buildRtp(fields);
      const h = emptyRtpHeader();
      expect(parseRtp(bytes, h)).toBeUndefined();
      expect(h).toMatchObject({
        marker: fields.marker,
        payloadType: fields.payloadType,
        sequence: fields.sequence,
        timestamp: fields.timestamp,
        ssrc: fields.ssrc,
      });
      expect(bytes.subarray(h.payloadStart, h.payloadEnd)).toEqual(payload);
    }
  });

  it("refuses short, wrong-version, bad-padding, truncated-extension and RTCP datagrams", () => {
    const h = emptyRtpHeader();
    const good = buildRtp({
      payloadType: 0,
      sequence: 1,
      timestamp: 2,
      ssrc: 3,
      payload: new Uint8Array(10),
    });
    expect(parseRtp(good.subarray(0, 11), h)).toBe("short");
    const v1 = good.slice();
    v1[0] = 0x40;
    expect(parseRtp(v1, h)).toBe("version");
    const csrcOverrun = good.slice(0, 14);
    csrcOverrun[0] = 0x80 | 3;
    expect(parseRtp(csrcOverrun, h)).toBe("short");
    const badPad = good.slice();
    badPad[0] |= 0x20;
    badPad[badPad.length - 1] = 200;
    expect(parseRtp(badPad, h)).toBe("padding");
    const ext = buildRtp({
      payloadType: 0,
      sequence: 1,
      timestamp: 2,
      ssrc: 3,
      payload: new Uint8Array(0),
      extension: { profile: 1, data: new Uint8Array(8) },
    });
    expect(parseRtp(ext.subarray(0, ext.length - 4), h)).toBe("extension");
    const rtcp = good.slice();
    rtcp[1] = 200; // a sender report
    expect(parseRtp(rtcp, h)).toBe("rtcp");
  });

  it("starts streams at random points", () => {
    const ssrcs = new Set(Array.from({ length: 20 }, () => random32()));
    const seqs = new Set(Array.from({ length: 20 }, () => random16()));
    expect(ssrcs.size).toBeGreaterThan(15);
    expect(seqs.size).toBeGreaterThan(10);
    for (const s of seqs) expect(s).toBeLessThan(0x10000);
  });
});
