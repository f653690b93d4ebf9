import { describe, expect, it } from "vitest";
import {
  bareValue,
  header,
  headerValues,
  parseCSeq,
  parseNameAddr,
  parseUri,
  parseVia,
} from "../../../bridges/sip/message.ts";
import { parseMessage } from "../../../bridges/sip/parse.ts";
import { makeResponse, serialize } from "../../../bridges/sip/serialize.ts";
import { SipStreamFramer } from "../../../bridges/sip/stream-framer.ts";
import { seededBytes } from "../../helpers/noise.ts";

const crlf = (lines: string[]): string => lines.join("\r\n");

const INVITE = crlf([
  "INVITE sip:agent@10.0.0.1:5060 SIP/2.0",
  "v: SIP/2.0/UDP 10.0.0.9:5070;branch=z9hG4bKaaa;rport",
  "Via: SIP/2.0/TCP proxy.example:5060;branch=z9hG4bKbbb, SIP/2.0/UDP 10.0.0.7;branch=z9hG4bKccc",
  'f: "Alice Smith" <sip:+15551234@carrier.example>;tag=abc',
  "t: <sip:agent@10.0.0.1>",
  "i: call-1@10.0.0.9",
  "CSeq: 7 INVITE",
  "m: <sip:alice@10.0.0.9:5070>",
  "Subject: a folded",
  "\tsubject line",
  "k: timer, 100rel",
  "X-Customer-Id: 42",
  "c: application/sdp",
  "l: 4",
  "",
  "v=0\r\n",
]);

describe("parseMessage", () => {
  it("expands compact forms, unfolds continuation lines and keeps every Via in order", () => {
    const r = parseMessage(Buffer.from(INVITE));
    expect(r.ok).toBe(true);
    if (!r.ok || r.msg.kind !== "request") throw new Error("expected a request");
    const m = r.msg;
    expect(m.method).toBe("INVITE");
    expect(m.uri).toBe("sip:agent@10.0.0.1:5060");
    expect(header(m, "call-id")).toBe("call-1@10.0.0.9");
    expect(header(m, "subject")).toBe("a folded subject line");
    expect(header(m, "content-type")).toBe("application/sdp");
    expect(headerValues(m, "supported")).toEqual(["timer", "100rel"]);
    const vias = headerValues(m, "via").map((v) => parseVia(v));
    expect(vias.map((v) => [v?.transport, v?.host, v?.port, v?.branch])).toEqual([
      ["UDP", "10.0.0.9", 5070, "z9hG4bKaaa"],
      ["TCP", "proxy.example", 5060, "z9hG4bKbbb"],
      ["UDP", "10.0.0.7", undefined, "z9hG4bKccc"],
    ]);
    expect(vias[0]?.params.has("rport")).toBe(true);
    // Content-Length frames the body: the bytes after the 4 declared are not part of it.
    expect(m.body.toString()).toBe("v=0\r");
    const from = parseNameAddr(header(m, "from") ?? "");
    expect(from).toEqual({ display: "Alice Smith", uri: "sip:+15551234@carrier.example", tag: "abc" });
    expect(parseUri(from?.uri ?? "")).toMatchObject({ user: "+15551234", host: "carrier.example" });
    expect(parseCSeq(header(m, "cseq"))).toEqual({ seq: 7, method: "INVITE" });
  });

  it("parses a status line and takes the whole rest of a datagram as the body without Content-Length", () => {
    const r = parseMessage(Buffer.from("SIP/2.0 486 Busy Here\r\nCall-ID: x\r\n\r\nhello"));
    expect(r.ok && r.msg.kind === "response" && [r.msg.status, r.msg.reason, r.msg.body.toString()]).toEqual([
      486,
      "Busy Here",
      "hello",
    ]);
  });

  it("reports a truncated body with the request parsed so far (so it can be answered 400)", () => {
    const r = parseMessage(Buffer.from(INVITE.replace("l: 4", "l: 400")));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(/Content-Length 400 exceeds/);
    expect(r.partial?.method).toBe("INVITE");
    expect(header(r.partial!, "call-id")).toBe("call-1@10.0.0.9");
  });

  it("rejects a huge or non-numeric Content-Length, binary junk, a missing start line", () => {
    expect(parseMessage(Buffer.from(INVITE.replace("l: 4", "l: 99999999999"))).ok).toBe(false);
    expect(parseMessage(Buffer.from(INVITE.replace("l: 4", "l: -1"))).ok).toBe(false);
    const junk = parseMessage(Buffer.from(seededBytes(2000, 7)));
    expect(junk).toMatchObject({ ok: false });
    expect(parseMessage(Buffer.from("Via: SIP/2.0/UDP x\r\n\r\n"))).toMatchObject({
      ok: false,
      error: /no SIP request/,
    });
    const withNul = parseMessage(Buffer.from(INVITE.replace("Subject: a folded", "Subject: a\u0000b")));
    expect(withNul).toMatchObject({ ok: false, error: /control characters in header Subject/ });
    expect(parseMessage(Buffer.alloc(70_000, 0x41))).toMatchObject({ ok: false, error: /too large/ });
  });
});

describe("bareValue", () => {
  it("reads a Content-Type's media type or an Event's package without parameters, lower-cased", () => {
    expect(bareValue("Application/SDP ; charset=utf-8")).toBe("application/sdp");
    expect(bareValue(" refer;id=93809824")).toBe("refer");
    expect(bareValue("application/dtmf-relay")).toBe("application/dtmf-relay");
    expect(bareValue(undefined)).toBe("");
    expect(bareValue("")).toBe("");
  });
});

describe("serialize and makeResponse", () => {
  it("copies Via (all, in order), From, To with our tag, Call-ID and CSeq, and writes Content-Length", () => {
    const r = parseMessage(Buffer.from(INVITE));
    if (!r.ok || r.msg.kind !== "request") throw new Error("expected a request");
    const res = makeResponse(r.msg, 200, {
      toTag: "ours",
      body: { type: "application/sdp", content: "v=0\r\n" },
    });
    const text = serialize(res).toString();
    expect(text.startsWith("SIP/2.0 200 OK\r\n")).toBe(true);
    const back = parseMessage(serialize(res));
    if (!back.ok || back.msg.kind !== "response") throw new Error("expected a response");
    expect(headerValues(back.msg, "via")).toHaveLength(3);
    expect(header(back.msg, "to")).toBe("<sip:agent@10.0.0.1>;tag=ours");
    expect(header(back.msg, "cseq")).toBe("7 INVITE");
    expect(text).toContain("Call-ID: call-1@10.0.0.9\r\n");
    expect(text).toContain("Content-Length: 5\r\n\r\nv=0\r\n");
  });
});

describe("SipStreamFramer", () => {
  const msg = (id: string, body = ""): string =>
    `OPTIONS sip:a@b SIP/2.0\r\nCall-ID: ${id}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it("cuts messages by Content-Length across arbitrary chunk boundaries and answers CRLF pings", () => {
    const stream = Buffer.from(`\r\n\r\n${msg("1", "abc")}${msg("2")}\r\n\r\n${msg("3", "xyz!")}`);
    for (const size of [1, 3, 17, stream.length]) {
      const framer = new SipStreamFramer();
      const events = [];
      for (let i = 0; i < stream.length; i += size) events.push(...framer.push(stream.subarray(i, i + size)));
      const types = events.map((e) => (e.type === "message" ? header(parseOk(e.bytes), "call-id") : e.type));
      expect(types).toEqual(["ping", "1", "2", "ping", "3"]);
    }
  });

  it("gives up on a Content-Length over 64 KB, keeping the headers to answer 400", () => {
    const framer = new SipStreamFramer();
    const events = framer.push(Buffer.from("INVITE sip:a@b SIP/2.0\r\nContent-Length: 900000\r\n\r\n"));
    expect(events).toMatchObject([{ type: "fatal", error: /too large/ }]);
    expect(framer.push(Buffer.from(msg("after")))).toEqual([]);
  });

  it("gives up on 64 KB of bytes with no end of headers", () => {
    const framer = new SipStreamFramer();
    expect(framer.push(Buffer.alloc(70_000, 0x61))).toMatchObject([
      { type: "fatal", error: /headers longer/ },
    ]);
  });
});

function parseOk(bytes: Buffer) {
  const r = parseMessage(bytes);
  if (!r.ok) throw new Error(r.error);
  return r.msg;
}
