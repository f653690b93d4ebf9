import { parse } from "sdp-transform";
import { describe, expect, it } from "vitest";
import { negotiate, writeAnswer } from "../../../bridges/sip/sdp-answer.ts";

const offer = (media: string[], session: string[] = []): string =>
  ["v=0", "o=- 1 1 IN IP4 192.0.2.5", "s=-", "c=IN IP4 192.0.2.5", "t=0 0", ...session, ...media, ""].join(
    "\r\n",
  );

const ALL = ["opus", "pcmu", "pcma"] as const;

describe("negotiate", () => {
  it("takes the first offered codec we accept, static types mapped by hand, and reuses telephone-event", () => {
    const r = negotiate(
      offer([
        "m=audio 4000 RTP/AVP 18 8 0 101",
        "a=rtpmap:18 G729/8000",
        "a=rtpmap:101 telephone-event/8000",
      ]),
      ALL,
    );
    expect(r).toMatchObject({
      ok: true,
      index: 0,
      media: {
        codec: { name: "pcma", payloadType: 8, clockRate: 8000 },
        telephoneEventPt: 101,
        remote: { address: "192.0.2.5", port: 4000 },
        direction: "sendrecv",
      },
    });
  });

  it("restricts to the configured codecs and takes Opus as opus/48000/2 on its dynamic type", () => {
    const sdp = offer([
      "m=audio 4000 RTP/AVP 0 111 102",
      "a=rtpmap:111 opus/48000/2",
      "a=rtpmap:102 telephone-event/48000",
    ]);
    expect(negotiate(sdp, ["opus"])).toMatchObject({
      ok: true,
      media: { codec: { name: "opus", payloadType: 111, clockRate: 48000 }, telephoneEventPt: 102 },
    });
    expect(negotiate(sdp, ["pcma"])).toMatchObject({
      ok: false,
      status: 488,
      reason: /no audio stream offers any of pcma/,
    });
  });

  it("skips a video line and an SRTP audio line, and answers them with port 0", () => {
    const sdp = offer([
      "m=video 5000 RTP/AVP 96",
      "a=rtpmap:96 VP8/90000",
      "m=audio 4002 RTP/SAVP 0",
      "m=audio 4000 RTP/AVP 0",
    ]);
    const r = negotiate(sdp, ALL);
    if (!r.ok) throw new Error(r.reason);
    expect(r.index).toBe(2);
    const answer = parse(
      writeAnswer({
        address: "198.51.100.1",
        port: 20000,
        sessionId: 5,
        version: 1,
        media: r.media,
        index: r.index,
        lines: r.lines,
      }),
    );
    expect(answer.media.map((m) => [m.type, m.port, m.protocol])).toEqual([
      ["video", 0, "RTP/AVP"],
      ["audio", 0, "RTP/SAVP"],
      ["audio", 20000, "RTP/AVP"],
    ]);
    expect(answer.connection?.ip).toBe("198.51.100.1");
    expect(answer.origin?.address).toBe("198.51.100.1");
    expect(String(answer.media[2]?.payloads)).toBe("0");
    expect(answer.media[2]?.direction).toBe("sendrecv");
  });

  it("mirrors the direction: their sendonly is our recvonly, inactive stays inactive, c=0.0.0.0 is hold", () => {
    const dir = (m: string[], s: string[] = []) => {
      const r = negotiate(offer(["m=audio 4000 RTP/AVP 0", ...m], s), ALL);
      return r.ok ? r.media.direction : r.reason;
    };
    expect(dir(["a=sendonly"])).toBe("recvonly");
    expect(dir(["a=recvonly"])).toBe("sendonly");
    expect(dir(["a=inactive"])).toBe("inactive");
    expect(dir([], ["a=sendonly"])).toBe("recvonly");
    expect(dir(["c=IN IP4 0.0.0.0"])).toBe("recvonly");
    expect(dir([])).toBe("sendrecv");
  });

  it("refuses SDP with no m= line, no address or no audio with 488 and a reason", () => {
    expect(negotiate("v=0\r\ns=-\r\n", ALL)).toMatchObject({ ok: false, status: 488, reason: /no m= line/ });
    expect(negotiate("v=0\r\ns=-\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n", ALL)).toMatchObject({
      ok: false,
      reason: /no c= address/,
    });
    expect(negotiate(offer(["m=video 5000 RTP/AVP 96"]), ALL)).toMatchObject({ ok: false, status: 488 });
    expect(negotiate("\u0000\u0001garbage", ALL)).toMatchObject({ ok: false, status: 488 });
  });

  it("writes the Opus and telephone-event rtpmaps the answer needs", () => {
    const r = negotiate(
      offer(["m=audio 4000 RTP/AVP 96 97", "a=rtpmap:96 opus/48000/2", "a=rtpmap:97 telephone-event/48000"]),
      ALL,
    );
    if (!r.ok) throw new Error(r.reason);
    const text = writeAnswer({
      address: "127.0.0.1",
      port: 20002,
      sessionId: 1,
      version: 2,
      media: r.media,
      index: r.index,
      lines: r.lines,
    });
    expect(text).toContain("m=audio 20002 RTP/AVP 96 97\r\n");
    expect(text).toContain("a=rtpmap:96 opus/48000/2\r\n");
    expect(text).toContain("a=rtpmap:97 telephone-event/48000\r\n");
  });
});

describe("SDES-SRTP in offer/answer (RFC 4568)", () => {
  const key = Buffer.alloc(30, 7).toString("base64");
  const savp = (crypto: string[]): string =>
    offer(["m=audio 4000 RTP/SAVP 0", "a=rtpmap:0 PCMU/8000", ...crypto]);

  it("takes the first usable suite, keeps the caller's key for receiving, answers RTP/SAVP with its own key", () => {
    const r = negotiate(
      savp([
        "a=crypto:1 AES_256_CM_HMAC_SHA1_80 inline:" + Buffer.alloc(46, 1).toString("base64"),
        `a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${key}|2^31`,
        `a=crypto:3 AES_CM_128_HMAC_SHA1_80 inline:${key}`,
      ]),
      ALL,
    );
    if (!r.ok) throw new Error(r.reason);
    const srtp = r.media.srtp!;
    expect(srtp).toMatchObject({ suite: "AES_CM_128_HMAC_SHA1_32", tagBits: 32, tag: 2 });
    expect(Buffer.from(srtp.remoteKey).toString("base64")).toBe(key);
    expect(Buffer.from(srtp.localKey).equals(Buffer.from(srtp.remoteKey))).toBe(false);
    const answer = parse(writeAnswer({ address: "192.0.2.1", port: 30000, sessionId: 1, version: 1, ...r }));
    expect(answer.media[0]!.protocol).toBe("RTP/SAVP");
    expect(answer.media[0]!.crypto).toEqual([
      {
        id: 2,
        suite: "AES_CM_128_HMAC_SHA1_32",
        config: `inline:${Buffer.from(srtp.localKey).toString("base64")}`,
      },
    ]);
  });

  it("refuses what it cannot run: MKI, short keys, no crypto on SAVP, and any SAVP when SRTP is off", () => {
    expect(negotiate(savp([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}|2^20|1:4`]), ALL).ok).toBe(
      false,
    );
    expect(negotiate(savp(["a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:c2hvcnQ="]), ALL).ok).toBe(false);
    expect(negotiate(savp([]), ALL).ok).toBe(false);
    expect(negotiate(savp([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]), ALL, "off")).toMatchObject({
      ok: false,
      status: 488,
    });
  });

  it("required: plain RTP gets 488; optional: plain RTP is plain, crypto on RTP/AVP is taken (best effort)", () => {
    const plain = offer(["m=audio 4000 RTP/AVP 0"]);
    const refused = negotiate(plain, ALL, "required");
    expect(refused).toMatchObject({ ok: false, status: 488 });
    if (!refused.ok) expect(refused.reason).toMatch(/SRTP is required/);
    const open = negotiate(plain, ALL, "optional");
    expect(open.ok && open.media.srtp).toBe(undefined);
    const bestEffort = negotiate(
      offer(["m=audio 4000 RTP/AVP 0", `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]),
      ALL,
      "optional",
    );
    if (!bestEffort.ok) throw new Error(bestEffort.reason);
    expect(bestEffort.media.srtp?.suite).toBe("AES_CM_128_HMAC_SHA1_80");
    const answer = writeAnswer({
      address: "192.0.2.1",
      port: 30000,
      sessionId: 1,
      version: 1,
      ...bestEffort,
    });
    expect(answer).toMatch(/m=audio 30000 RTP\/AVP 0/);
    expect(answer).toMatch(/a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:/);
  });

  it("a re-offer keeps our key when given it", () => {
    const first = negotiate(savp([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]), ALL);
    if (!first.ok) throw new Error(first.reason);
    const again = negotiate(
      savp([`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}`]),
      ALL,
      "optional",
      first.media.srtp!.localKey,
    );
    expect(
      again.ok && Buffer.from(again.media.srtp!.localKey).equals(Buffer.from(first.media.srtp!.localKey)),
    ).toBe(true);
  });
});
