// The hot-path reader of Twilio media messages agrees with the full parser, and hands anything
// unusual back to it.
import { describe, expect, it } from "vitest";
import { parseTwilioMessage, scanTwilioMedia } from "../../../bridges/twilio/protocol.ts";

const media = (body: Record<string, unknown>) =>
  JSON.stringify({
    event: "media",
    sequenceNumber: "3",
    media: { track: "inbound", chunk: "1", timestamp: "5", payload: "no+JhoaJjpzSHxAKBgYJDhwc" },
    streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0",
    ...body,
  });

describe("scanTwilioMedia", () => {
  it("reads what parseTwilioMessage reads from Twilio's media message", () => {
    const text = media({});
    const parsed = parseTwilioMessage(text);
    expect(parsed.ok).toBe(true);
    const full = parsed.ok && parsed.message.event === "media" ? parsed.message.media : undefined;
    expect(scanTwilioMedia(text)).toEqual({
      track: full?.track,
      timestamp: full?.timestamp,
      payload: full?.payload,
    });
  });

  it("leaves escapes, other events, missing fields and odd shapes to the full parser", () => {
    expect(scanTwilioMedia(media({ streamSid: 'MZ"quoted"' }))).toBeUndefined();
    expect(scanTwilioMedia(media({ streamSid: undefined }))).toBeUndefined();
    expect(scanTwilioMedia(media({ sequenceNumber: 3 }))).toBeUndefined();
    expect(scanTwilioMedia(media({ media: { timestamp: "5" } }))).toBeUndefined();
    expect(scanTwilioMedia(media({}).replace('"event":"media"', '"event":"mark"'))).toBeUndefined();
    expect(scanTwilioMedia(`${media({})} `)).toBeUndefined();
    expect(scanTwilioMedia(` ${media({})}`)).toBeUndefined();
  });

  it("reads a message without a track as one without a track", () => {
    const text = media({ media: { timestamp: "40", payload: "AAAA" } });
    expect(scanTwilioMedia(text)).toEqual({ track: undefined, timestamp: "40", payload: "AAAA" });
  });
});
