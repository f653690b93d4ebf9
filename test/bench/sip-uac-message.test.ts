import { describe, expect, it } from "vitest";
import {
  buildRequest,
  buildResponse,
  contactTarget,
  header,
  offerSdp,
  parseSdpAudio,
  parseSipMessage,
  type SipRequest,
  tagOf,
} from "../../bench/lib/sip-uac-message.ts";

describe("SIP messages of the benchmark's UAC", () => {
  it("builds a request that parses back, with Content-Length from the body", () => {
    const body = offerSdp("127.0.0.1", 40000, "pcma");
    const text = buildRequest(
      "INVITE",
      "sip:agent@127.0.0.1:5080",
      [
        ["Call-ID", "abc@x"],
        ["CSeq", "1 INVITE"],
      ],
      body,
    );
    const m = parseSipMessage(text) as SipRequest;
    expect(m).toMatchObject({ kind: "request", method: "INVITE", uri: "sip:agent@127.0.0.1:5080", body });
    expect(header(m, "content-length")).toBe(String(body.length));
    expect(parseSdpAudio(m.body)).toEqual({ address: "127.0.0.1", port: 40000, payloadTypes: [8, 101] });
  });

  it("reads responses with compact and folded headers, and the parts a dialog needs", () => {
    const text = [
      "SIP/2.0 200 OK",
      "v: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK1",
      "f: <sip:bench@127.0.0.1>;tag=aa",
      "t: <sip:agent@127.0.0.1>;tag=bb",
      "i: call-1",
      "CSeq: 1",
      " INVITE",
      "m: <sip:agent@10.0.0.5:5090;transport=udp>",
      "l: 4",
      "",
      "abcdEXTRA",
    ].join("\r\n");
    const m = parseSipMessage(text)!;
    expect(m.kind).toBe("response");
    expect(header(m, "cseq")).toBe("1 INVITE");
    expect(m.body).toBe("abcd");
    expect(tagOf(header(m, "to"))).toBe("bb");
    expect(contactTarget(header(m, "contact"))).toEqual({ address: "10.0.0.5", port: 5090 });
    expect(contactTarget("<sip:host.example>")).toEqual({ address: "host.example", port: 5060 });
    expect(parseSipMessage("hello\r\n\r\n")).toBeUndefined();
  });

  it("answers a request with its Via, From, To (tagged), Call-ID and CSeq", () => {
    const req = parseSipMessage(
      buildRequest("BYE", "sip:x", [
        ["Via", "SIP/2.0/UDP a;branch=z9hG4bK1"],
        ["Via", "SIP/2.0/UDP b;branch=z9hG4bK2"],
        ["From", "<sip:a>;tag=1"],
        ["To", "<sip:b>"],
        ["Call-ID", "c"],
        ["CSeq", "7 BYE"],
      ]),
    ) as SipRequest;
    const res = parseSipMessage(buildResponse(req, 200, "OK", "t9"))!;
    expect(res).toMatchObject({ kind: "response", status: 200 });
    expect(res.headers.get("via")).toHaveLength(2);
    expect(tagOf(header(res, "to"))).toBe("t9");
    expect(header(res, "cseq")).toBe("7 BYE");
  });

  it("takes the media-level connection address over the session one", () => {
    const sdp =
      "v=0\r\nc=IN IP4 1.1.1.1\r\nm=audio 5000 RTP/AVP 0\r\nc=IN IP4 2.2.2.2\r\nm=video 6000 RTP/AVP 96\r\n";
    expect(parseSdpAudio(sdp)).toEqual({ address: "2.2.2.2", port: 5000, payloadTypes: [0] });
    expect(parseSdpAudio("v=0\r\nm=audio 5000 RTP/AVP 0\r\n")).toBeUndefined();
  });
});
