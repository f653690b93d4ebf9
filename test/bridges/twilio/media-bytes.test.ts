// Inbound media read from the message bytes (no string per frame) against the full parser's fields
// it stands in for: the same audio to the session.
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { TwilioCallTransport } from "../../../bridges/twilio/call-transport.ts";
import {
  type MediaFields,
  mediaSpan,
  parseTwilioMessage,
  type StartMessage,
  scanTwilioMedia,
} from "../../../bridges/twilio/protocol.ts";
import { mulawEncode } from "../../../codecs/g711.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { speak } from "../../helpers/speech.ts";
import { mediaMessage } from "./helpers.ts";

/** The media fields of a message, as the full parser reads them. */
function parsedMedia(text: string): MediaFields {
  const parsed = parseTwilioMessage(text);
  if (!parsed.ok || parsed.message.event !== "media") throw new Error(`not a media message: ${text}`);
  return parsed.message.media;
}

describe("TwilioCallTransport.handleMediaBytes", () => {
  function transport(): { t: TwilioCallTransport; frames: Int16Array[] } {
    const start: StartMessage = {
      event: "start",
      sequenceNumber: "1",
      streamSid: "MZ1",
      start: {
        streamSid: "MZ1",
        accountSid: "AC1",
        callSid: "CA1",
        tracks: ["inbound"],
        customParameters: {},
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
    };
    const t = new TwilioCallTransport({
      socket: { send: () => {}, close: () => {} }, // inbound only: nothing is sent
      start,
      log: silentLogger,
      clock: new VirtualClock(),
      control: undefined,
    });
    const frames: Int16Array[] = [];
    t.attach({ audio: (f) => frames.push(f.slice()), dtmf: () => {}, played: () => {}, ended: () => {} });
    return { t, frames };
  }

  it("gives the session the frames the parsed message gives, on speech in chunks of every size", () => {
    const ulaw = mulawEncode(speak("What are your opening hours?", { rate: 8000 }));
    const messages: string[] = [];
    for (let at = 0, i = 0; at < ulaw.length; i++) {
      const n = [160, 160, 80, 240, 1, 159, 400, 33][i % 8]!;
      const chunk = ulaw.subarray(at, at + n);
      messages.push(
        mediaMessage({
          media: {
            track: "inbound",
            chunk: String(i),
            timestamp: String(Math.floor(at / 8)),
            payload: Buffer.from(chunk).toString("base64"),
          },
        }),
      );
      at += n;
    }
    const viaParser = transport();
    for (const m of messages) viaParser.t.handleMedia(parsedMedia(m));
    const viaBytes = transport();
    const span = mediaSpan();
    for (const m of messages) {
      const msg = Buffer.from(m);
      expect(scanTwilioMedia(msg, span)).toBe(true);
      expect(viaBytes.t.handleMediaBytes(msg, span)).toBe(true);
    }
    expect(viaBytes.frames.length).toBe(Math.floor(ulaw.length / 160));
    expect(viaBytes.frames).toEqual(viaParser.frames);
  });

  it("hands back a payload that is not plain Base64, untouched, for the full parser", () => {
    const { t, frames } = transport();
    const msg = Buffer.from(mediaMessage({ media: { timestamp: "0", payload: "AAAA AAAA" } }));
    const span = mediaSpan();
    expect(scanTwilioMedia(msg, span)).toBe(true);
    expect(t.handleMediaBytes(msg, span)).toBe(false);
    expect(frames).toEqual([]);
  });
});
