// The UAS core on virtual time: transactions, 2xx retransmission, methods, draining.
import { describe, expect, it } from "vitest";
import { header } from "../../../bridges/sip/message.ts";
import { flushMicrotasks } from "../../../src/core/clock.ts";
import { coreRig, OFFER, request } from "./core-rig.ts";

const gaps = (times: number[]): number[] => times.slice(1).map((t, i) => t - times[i]!);

describe("INVITE server transaction and the 2xx", () => {
  it("sends 100 at once, answers 200 with SDP, retransmits it T1 doubling to T2 until the ACK", async () => {
    const r = coreRig();
    const { toTag, ok } = await r.call({ extra: ["X-Customer-Id: 42"] });
    expect(r.responses(100)).toHaveLength(1);
    expect(ok.body.toString()).toMatch(/m=audio \d+ RTP\/AVP 0 101/);
    expect(header(ok, "contact")).toBe("<sip:voice-bridge@192.0.2.1:5060>");
    const t = r.media.made[0]!;
    expect(t.info).toEqual({
      callId: "call-1",
      transport: "sip",
      from: "+15550001",
      to: "agent",
      params: { "x-customer-id": "42" },
    });
    expect(t.medias[0]).toMatchObject({
      codec: { name: "pcmu", payloadType: 0 },
      telephoneEventPt: 101,
      remote: { address: "192.0.2.9", port: 4000 },
    });
    r.clock.advance(12_000);
    expect(gaps(r.responses(200, "INVITE").map((s) => s.at))).toEqual([500, 1000, 2000, 4000, 4000]);
    r.send(request("ACK", { toTag, cseq: 1 }));
    r.clock.advance(20_000);
    expect(r.responses(200, "INVITE")).toHaveLength(6);
    expect(r.requests("BYE")).toHaveLength(0);
    expect(t.endReasons).toEqual([]);
  });

  it("behind NAT writes SIP_PUBLIC_IP in Contact and in the SDP's c= and o= lines", async () => {
    const r = coreRig({ sip: { publicIp: "203.0.113.7" } });
    const { ok } = await r.call();
    expect(header(ok, "contact")).toBe("<sip:voice-bridge@203.0.113.7:5060>");
    expect(ok.body.toString()).toMatch(/^o=voice-bridge \d+ \d+ IN IP4 203\.0\.113\.7\r$/m);
    expect(ok.body.toString()).toMatch(/^c=IN IP4 203\.0\.113\.7\r$/m);
  });

  it("a retransmitted INVITE gets the 200 again, not a second call", async () => {
    const r = coreRig();
    await r.call({ branch: "z9hG4bKsame" });
    r.send(request("INVITE", { body: OFFER, branch: "z9hG4bKsame" }));
    expect(r.responses(200, "INVITE")).toHaveLength(2);
    expect(r.media.made).toHaveLength(1);
    expect(r.pool.inUse).toBe(1);
  });

  it("with no ACK gives up after 64*T1, sends BYE (retransmitted on Timer E) and ends the media", async () => {
    const r = coreRig();
    await r.call();
    const start = r.clock.now();
    r.clock.advance(32_000);
    const bye = r.requests("BYE");
    expect(bye).toHaveLength(1);
    expect(bye[0]!.at - start).toBe(32_000);
    expect(r.media.made[0]!.endReasons).toEqual(["no ACK for the answer"]);
    expect(r.pool.inUse).toBe(0);
    expect(r.core.stats.dialogs).toBe(0);
    r.clock.advance(40_000);
    // Timer E: T1 doubling to T2 until Timer F (64*T1) gives up.
    expect(gaps(r.requests("BYE").map((s) => s.at)).slice(0, 5)).toEqual([500, 1000, 2000, 4000, 4000]);
    const last = r.requests("BYE").at(-1)!.at;
    expect(last - start).toBeLessThan(64_000);
  });

  it("over TCP does not retransmit the 2xx but still hangs up when no ACK comes", async () => {
    const r = coreRig({ reliable: true });
    await r.call();
    r.clock.advance(31_000);
    expect(r.responses(200, "INVITE")).toHaveLength(1);
    r.clock.advance(1_000);
    expect(r.requests("BYE")).toHaveLength(1);
    expect(header(r.responses(200, "INVITE")[0]!.msg, "contact")).toContain(";transport=tcp");
  });

  it("retransmits a final error on Timer G until the ACK, then absorbs it; Timer H ends the transaction", () => {
    const r = coreRig();
    r.send(request("INVITE", { body: "v=0\r\ns=-\r\n", branch: "z9hG4bKbad" }));
    expect(r.responses(488)).toHaveLength(1);
    expect(header(r.responses(488)[0]!.msg, "warning")).toMatch(/no m= line/);
    r.clock.advance(3_500);
    expect(gaps(r.responses(488).map((s) => s.at))).toEqual([500, 1000, 2000]);
    r.send(request("ACK", { branch: "z9hG4bKbad", toTag: "x" }));
    r.clock.advance(10_000);
    expect(r.responses(488)).toHaveLength(4);
    expect(r.core.stats.transactions).toBe(0);

    r.send(request("INVITE", { body: "v=0\r\ns=-\r\n", branch: "z9hG4bKnoack", callId: "c2" }));
    r.clock.advance(31_999);
    expect(r.core.stats.transactions).toBe(1);
    r.clock.advance(1);
    expect(r.core.stats.transactions).toBe(0);
  });
});

describe("CANCEL", () => {
  it("answers 200 and 487 to an INVITE not yet answered, and frees the port opened meanwhile", async () => {
    const r = coreRig();
    let release!: () => void;
    r.pool.gate = new Promise((res) => {
      release = res;
    });
    r.send(request("INVITE", { body: OFFER, branch: "z9hG4bKinv" }));
    r.send(request("CANCEL", { branch: "z9hG4bKinv" }));
    expect(r.responses(200, "CANCEL")).toHaveLength(1);
    const terminated = r.responses(487, "INVITE");
    expect(terminated).toHaveLength(1);
    expect(header(terminated[0]!.msg, "to")).toMatch(/;tag=/);
    release();
    await expect.poll(() => r.pool.opened).toBe(1);
    await expect.poll(() => r.pool.inUse).toBe(0);
    expect(r.media.made).toHaveLength(0);
    expect(r.responses(200, "INVITE")).toHaveLength(0);
  });

  it("answers 481 to a CANCEL matching no INVITE", () => {
    const r = coreRig();
    r.send(request("CANCEL", { branch: "z9hG4bKnothing" }));
    expect(r.responses(481, "CANCEL")).toHaveLength(1);
  });
});

describe("in-dialog requests", () => {
  it("BYE: 200, and the media is ended at once with 'caller hung up'; a second BYE gets 481", async () => {
    const r = coreRig();
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    r.send(request("BYE", { toTag, cseq: 2 }));
    expect(r.responses(200, "BYE")).toHaveLength(1);
    expect(r.media.made[0]!.endReasons).toEqual(["caller hung up"]);
    expect(r.pool.inUse).toBe(0);
    r.send(request("BYE", { toTag, cseq: 3 }));
    expect(r.responses(481, "BYE")).toHaveLength(1);
  });

  it("INFO: keypad digits (dtmf-relay, dtmf, * and # as 10 and 11) reach the media side; other INFO is acknowledged; a bad keypad body gets 400", async () => {
    const r = coreRig();
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    const info = (cseq: number, contentType: string, body: string) =>
      r.send(request("INFO", { toTag, cseq, contentType, body }));
    info(2, "application/dtmf-relay", "Signal=5\r\nDuration=160\r\n");
    info(3, "application/dtmf-relay", "Signal= 10\r\nDuration=100\r\n");
    info(4, "application/dtmf", "11");
    info(5, "application/media_control+xml", "<media_control/>");
    info(6, "application/dtmf-relay", "Duration=160\r\n");
    info(7, "application/dtmf", "x");
    expect(r.responses(200, "INFO")).toHaveLength(4);
    const bad = r.responses(400, "INFO");
    expect(bad).toHaveLength(2);
    expect(header(bad[0]!.msg, "warning")).toMatch(/Signal/);
    expect(r.media.made[0]!.infoDigits).toEqual(["5", "*", "#"]);
  });

  it("behind a proxy: Record-Route is copied into the 200 and becomes the Route of our BYE, sent to the Contact", async () => {
    const r = coreRig();
    const rr = ["Record-Route: <sip:10.0.0.2;lr>", "Record-Route: <sip:10.0.0.1;lr;transport=tcp>"];
    const { toTag, ok } = await r.call({ extra: rr });
    expect(ok.headers.filter((h) => h.name === "record-route").map((h) => h.value)).toEqual([
      "<sip:10.0.0.2;lr>",
      "<sip:10.0.0.1;lr;transport=tcp>",
    ]);
    r.send(request("ACK", { toTag }));
    void r.media.made[0]!.control.hangUp("goodbye");
    const bye = r.requests("BYE")[0]!.msg;
    expect(bye.uri).toBe("sip:caller@192.0.2.9:5070");
    expect(bye.headers.filter((h) => h.name === "route").map((h) => h.value)).toEqual([
      "<sip:10.0.0.2;lr>",
      "<sip:10.0.0.1;lr;transport=tcp>",
    ]);
    expect(header(bye, "from")).toBe(`<sip:agent@192.0.2.1>;tag=${toTag}`);
    expect(header(bye, "to")).toBe('"Caller" <sip:+15550001@carrier.example>;tag=peer');
    expect(header(bye, "cseq")).toMatch(/^\d+ BYE$/);
    expect(header(bye, "via")).toMatch(/^SIP\/2\.0\/UDP 192\.0\.2\.1:5060;branch=z9hG4bK\w+;rport$/);
    expect(r.core.stats.dialogs).toBe(0);
  });

  it("re-INVITE: hold (sendonly) is answered recvonly, inactive inactive, resume sendrecv; 491 while one awaits its ACK", async () => {
    const r = coreRig();
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    const reinvite = (cseq: number, attr: string, contact?: string) =>
      r.send(
        request("INVITE", {
          toTag,
          cseq,
          body: OFFER.replace("a=rtpmap", `${attr}\r\na=rtpmap`),
          ...(contact ? { contact } : {}),
        }),
      );
    reinvite(2, "a=sendonly");
    const held = r.responses(200, "INVITE").at(-1)!.msg;
    expect(held.body.toString()).toContain("a=recvonly");
    reinvite(3, "a=inactive");
    expect(r.responses(491, "INVITE")).toHaveLength(1);
    r.send(request("ACK", { toTag, cseq: 2 }));
    reinvite(4, "a=inactive");
    expect(r.responses(200, "INVITE").at(-1)!.msg.body.toString()).toContain("a=inactive");
    r.send(request("ACK", { toTag, cseq: 4 }));
    reinvite(5, "a=sendrecv", "sip:caller@192.0.2.10:5080");
    expect(r.responses(200, "INVITE").at(-1)!.msg.body.toString()).toContain("a=sendrecv");
    expect(r.media.made[0]!.medias.map((m) => m.direction)).toEqual([
      "sendrecv",
      "recvonly",
      "inactive",
      "sendrecv",
    ]);
    // The re-INVITEs' Contact is the new remote target our BYE goes to.
    void r.media.made[0]!.control.hangUp("done");
    expect(r.requests("BYE")[0]!.msg.uri).toBe("sip:caller@192.0.2.10:5080");
    // The session version goes up with each answer (RFC 3264 §8).
    const versions = r
      .responses(200, "INVITE")
      .map((s) => /o=\S+ \d+ (\d+)/.exec(s.msg.body.toString())?.[1]);
    expect(new Set(versions).size).toBeGreaterThan(3);
  });

  it("a re-INVITE with SDP we cannot take gets 488 and the call keeps its media", async () => {
    const r = coreRig();
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    r.send(request("INVITE", { toTag, cseq: 2, body: OFFER.replace("RTP/AVP 0 101", "RTP/AVP 18") }));
    expect(r.responses(488, "INVITE")).toHaveLength(1);
    expect(r.media.made[0]!.medias).toHaveLength(1);
    expect(r.core.stats.dialogs).toBe(1);
  });

  it("Session-Expires: echoed with refresher=uac; no refresh hangs up, a refresh (UPDATE) postpones it", async () => {
    const r = coreRig();
    const { toTag, ok } = await r.call({ extra: ["Session-Expires: 120", "Supported: timer"] });
    expect(header(ok, "session-expires")).toBe("120;refresher=uac");
    expect(header(ok, "require")).toBe("timer");
    r.send(request("ACK", { toTag }));
    r.clock.advance(60_000);
    r.send(request("UPDATE", { toTag, cseq: 2, extra: ["Session-Expires: 120"] }));
    expect(r.responses(200, "UPDATE")).toHaveLength(1);
    // Due 120 - min(32, 120/3) = 88 s after the last refresh: past the first deadline, not the second.
    r.clock.advance(87_000);
    expect(r.requests("BYE")).toHaveLength(0);
    r.clock.advance(1_000);
    expect(r.requests("BYE")).toHaveLength(1);
    expect(r.media.made[0]!.endReasons).toEqual(["session expired"]);
  });
});

describe("session timer floor", () => {
  it("answers 422 with Min-SE to a Session-Expires below 90 s, on a new call and on a refresh", async () => {
    const r = coreRig();
    r.send(request("INVITE", { body: OFFER, callId: "short", extra: ["Session-Expires: 30"] }));
    expect(header(r.responses(422)[0]!.msg, "min-se")).toBe("90");
    expect(r.pool.opened).toBe(0);
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    r.send(request("UPDATE", { toTag, cseq: 2, extra: ["Session-Expires: 60"] }));
    expect(r.responses(422, "UPDATE")).toHaveLength(1);
  });
});

describe("out-of-dialog requests and bad input", () => {
  it("OPTIONS: 200 with Allow and Accept; its retransmission gets the same response; Timer J ends it", () => {
    const r = coreRig();
    r.send(request("OPTIONS", { branch: "z9hG4bKopt" }));
    r.send(request("OPTIONS", { branch: "z9hG4bKopt" }));
    const oks = r.responses(200, "OPTIONS");
    expect(oks).toHaveLength(2);
    expect(header(oks[0]!.msg, "to")).toBe(header(oks[1]!.msg, "to"));
    expect(header(oks[0]!.msg, "allow")).toContain("INVITE");
    expect(header(oks[0]!.msg, "accept")).toBe("application/sdp");
    expect(header(oks[0]!.msg, "via")).toContain("received=192.0.2.9");
    expect(header(oks[0]!.msg, "via")).toContain("rport=5070");
    r.clock.advance(32_000);
    expect(r.core.stats.transactions).toBe(0);
  });

  it("405 for a method we know but do not take, 501 for an unknown one, 481 for BYE outside a dialog, 420 for an unknown Require", () => {
    const r = coreRig();
    r.send(request("SUBSCRIBE"));
    r.send(request("FROBNICATE"));
    r.send(request("BYE"));
    r.send(request("INVITE", { body: OFFER, extra: ["Require: 100rel"] }));
    expect(r.sent.map((s) => (s.msg.kind === "response" ? s.msg.status : s.msg.method))).toEqual([
      405, 501, 481, 100, 420,
    ]);
    expect(header(r.responses(405)[0]!.msg, "allow")).toContain("BYE");
    expect(header(r.responses(420)[0]!.msg, "unsupported")).toBe("100rel");
  });

  it("answers 400 naming the missing header, and drops what cannot be answered (no Via), counting both", () => {
    const r = coreRig();
    r.send(
      Buffer.from(
        request("OPTIONS")
          .toString()
          .replace(/Call-ID:.*\r\n/, ""),
      ),
    );
    r.send(
      Buffer.from(
        request("OPTIONS")
          .toString()
          .replace(/Via:.*\r\n/, ""),
      ),
    );
    r.send(Buffer.from("\u0000\u0001\u0002 junk"));
    expect(r.responses(400)).toHaveLength(1);
    expect(r.responses(400)[0]!.msg.reason).toMatch(/missing Call-ID header/);
    expect(r.core.stats).toMatchObject({ badRequests: 1, dropped: 2 });
  });

  it("an INVITE with a body other than SDP gets 415 and no port is taken", () => {
    const r = coreRig();
    r.send(
      Buffer.from(request("INVITE", { body: "hello" }).toString().replace("application/sdp", "text/plain")),
    );
    expect(r.responses(415)).toHaveLength(1);
    expect(r.pool.opened).toBe(0);
  });

  it("answers 503 when every RTP port is taken", async () => {
    const r = coreRig();
    r.pool.exhausted = true;
    r.send(request("INVITE", { body: OFFER }));
    await expect.poll(() => r.responses(503)).toHaveLength(1);
  });
});

describe("drain", () => {
  it("refuses OPTIONS and new INVITEs with 503 + Retry-After while calls in progress are still served", async () => {
    const r = coreRig();
    const { toTag } = await r.call();
    r.send(request("ACK", { toTag }));
    let drained = false;
    void r.core.drain().then(() => {
      drained = true;
    });
    r.send(request("OPTIONS"));
    r.send(request("INVITE", { body: OFFER, callId: "call-2" }));
    const refused = r.responses(503);
    expect(refused.map((s) => header(s.msg, "cseq"))).toEqual(["1 OPTIONS", "1 INVITE"]);
    expect(refused.every((s) => header(s.msg, "retry-after") === "30")).toBe(true);
    r.send(request("INVITE", { toTag, cseq: 2, body: OFFER.replace("a=rtpmap", "a=sendonly\r\na=rtpmap") }));
    expect(r.responses(200, "INVITE").at(-1)!.msg.body.toString()).toContain("a=recvonly");
    r.send(request("ACK", { toTag, cseq: 2 }));
    await flushMicrotasks();
    expect(drained).toBe(false);
    r.send(request("BYE", { toTag, cseq: 3 }));
    expect(r.responses(200, "BYE")).toHaveLength(1);
    await expect.poll(() => drained).toBe(true);
    expect(r.pool.opened).toBe(1);
  });
});

describe("late offer (INVITE without SDP)", () => {
  const answerSdp = [
    "v=0",
    "o=- 2 2 IN IP4 192.0.2.9",
    "s=-",
    "c=IN IP4 192.0.2.9",
    "t=0 0",
    "m=audio 4010 RTP/AVP 8 101",
    "a=rtpmap:8 PCMA/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=sendrecv",
    "",
  ].join("\r\n");

  it("offers every configured codec in the 200 and starts media on the answer in the ACK", async () => {
    const r = coreRig({ sip: { codecs: ["pcmu", "pcma"] } });
    const { toTag, ok } = await r.call({ body: "" });
    expect(ok.body.toString()).toMatch(/m=audio \d+ RTP\/AVP 0 8 101\r\n/);
    expect(r.media.made).toHaveLength(0);
    r.send(request("ACK", { toTag, body: answerSdp }));
    expect(r.media.made).toHaveLength(1);
    expect(r.media.made[0]!.medias[0]).toMatchObject({
      codec: { name: "pcma", payloadType: 8 },
      telephoneEventPt: 101,
      remote: { port: 4010 },
    });
  });

  it("hangs up when the ACK brings no answer, and frees the port", async () => {
    const r = coreRig();
    const { toTag } = await r.call({ body: "" });
    r.send(request("ACK", { toTag }));
    expect(r.requests("BYE")).toHaveLength(1);
    expect(r.media.made).toHaveLength(0);
    expect(r.pool.inUse).toBe(0);
    expect(r.core.stats.dialogs).toBe(0);
  });
});
