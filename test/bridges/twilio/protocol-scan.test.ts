// The hot-path reader of Twilio media messages (scanTwilioMedia, on the message's bytes) agrees
// with the full parser, and hands anything unusual back to it.
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { mediaSpan, parseTwilioMessage, scanTwilioMedia } from "../../../bridges/twilio/protocol.ts";
import { mediaMessage } from "./helpers.ts";

/** What the scan reads, or undefined when it leaves the message to the full parser. */
function scan(text: string) {
  const msg = Buffer.from(text, "utf8");
  const span = mediaSpan();
  if (!scanTwilioMedia(msg, span)) return undefined;
  return {
    payload: msg.toString("latin1", span.payloadStart, span.payloadEnd),
    timestamp: span.timestampMs,
    otherTrack: span.otherTrack,
  };
}

/** What the full parser gives, in the scan's terms. */
function parse(text: string) {
  const parsed = parseTwilioMessage(text);
  if (!parsed.ok || parsed.message.event !== "media") return undefined;
  const m = parsed.message.media;
  return {
    payload: m.payload,
    timestamp: Number(m.timestamp),
    otherTrack: !!m.track && m.track !== "inbound",
  };
}

describe("scanTwilioMedia", () => {
  it("reads what parseTwilioMessage reads from Twilio's media messages", () => {
    const accepted = [
      mediaMessage({}),
      mediaMessage({ media: { timestamp: "40", payload: "AAAA" } }), // no track
      mediaMessage({ media: { track: "outbound", timestamp: "1234567", payload: "//8=" } }),
      mediaMessage({ media: { track: "", timestamp: "0", payload: "" } }),
      // Twilio's own field order.
      '{"event":"media","sequenceNumber":"4","media":{"track":"inbound","chunk":"2","timestamp":"20","payload":"fn5+"},"streamSid":"MZ1"}',
    ];
    for (const text of accepted) {
      expect(parse(text), text).toBeDefined();
      expect(scan(text), text).toEqual(parse(text));
    }
  });

  it("reads a message without a track as one without a track", () => {
    expect(scan(mediaMessage({ media: { timestamp: "40", payload: "AAAA" } }))).toEqual({
      payload: "AAAA",
      timestamp: 40,
      otherTrack: false,
    });
  });

  it("leaves escapes, other events, missing fields and odd shapes to the full parser", () => {
    const refused = [
      mediaMessage({ streamSid: 'MZ"quoted"' }),
      mediaMessage({ streamSid: undefined }),
      mediaMessage({ sequenceNumber: 3 }),
      mediaMessage({ media: { timestamp: "5" } }),
      mediaMessage({}).replace('"event":"media"', '"event":"mark"'),
      `${mediaMessage({})} `,
      ` ${mediaMessage({})}`,
    ];
    for (const text of refused) expect(scan(text), text).toBeUndefined();
    // Of these, the full parser still reads the ones that are well-formed.
    expect(parse(mediaMessage({ streamSid: 'MZ"quoted"' }))).toBeDefined();
    expect(parse(` ${mediaMessage({})}`)).toBeDefined();
  });

  it("leaves to the full parser timestamps that are not plain digits", () => {
    for (const ts of ["1.5", "-3", "", "1e3", "12345678901234567"]) {
      const text = mediaMessage({ media: { timestamp: ts, payload: "AAAA" } });
      expect(scan(text), ts).toBeUndefined();
      expect(parse(text), ts).toBeDefined();
    }
  });
});
