// The hot-path reader of Twilio media messages agrees with the full parser, and hands anything
// unusual back to it.
import { describe, expect, it } from "vitest";
import { parseTwilioMessage, scanTwilioMedia } from "../../../bridges/twilio/protocol.ts";
import { mediaMessage } from "./helpers.ts";

describe("scanTwilioMedia", () => {
  it("reads what parseTwilioMessage reads from Twilio's media message", () => {
    const text = mediaMessage({});
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
    expect(scanTwilioMedia(mediaMessage({ streamSid: 'MZ"quoted"' }))).toBeUndefined();
    expect(scanTwilioMedia(mediaMessage({ streamSid: undefined }))).toBeUndefined();
    expect(scanTwilioMedia(mediaMessage({ sequenceNumber: 3 }))).toBeUndefined();
    expect(scanTwilioMedia(mediaMessage({ media: { timestamp: "5" } }))).toBeUndefined();
    expect(scanTwilioMedia(mediaMessage({}).replace('"event":"media"', '"event":"mark"'))).toBeUndefined();
    expect(scanTwilioMedia(`${mediaMessage({})} `)).toBeUndefined();
    expect(scanTwilioMedia(` ${mediaMessage({})}`)).toBeUndefined();
  });

  it("reads a message without a track as one without a track", () => {
    const text = mediaMessage({ media: { timestamp: "40", payload: "AAAA" } });
    expect(scanTwilioMedia(text)).toEqual({ track: undefined, timestamp: "40", payload: "AAAA" });
  });
});
