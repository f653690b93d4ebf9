// Inbound media read from the message bytes (no string per frame) against the text path it
// replaces: the same messages accepted, the same fields, the same audio to the session.
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { TwilioCallTransport } from "../../../bridges/twilio/call-transport.ts";
import { mediaSpan, scanTwilioMediaBytes } from "../../../bridges/twilio/media-bytes.ts";
import { type MediaFields, type StartMessage, scanTwilioMedia } from "../../../bridges/twilio/protocol.ts";
import { mulawEncode } from "../../../codecs/g711.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { speak } from "../../helpers/speech.ts";
import { mediaMessage } from "./helpers.ts";

function scanBytes(text: string) {
  const msg = Buffer.from(text, "utf8");
  const span = mediaSpan();
  if (!scanTwilioMediaBytes(msg, span)) return undefined;
  return {
    payload: msg.toString("latin1", span.payloadStart, span.payloadEnd),
    timestamp: span.timestampMs,
    otherTrack: span.otherTrack,
  };
}

/** What the text reader gives, in the byte reader's terms. */
function scanText(text: string) {
  const m = scanTwilioMedia(text);
  if (!m) return undefined;
  return {
    payload: m.payload,
    timestamp: Number(m.timestamp),
    otherTrack: !!m.track && m.track !== "inbound",
  };
}

describe("scanTwilioMediaBytes", () => {
  it("accepts what scanTwilioMedia accepts and reads the same fields", () => {
    const accepted = [
      mediaMessage({}),
      mediaMessage({ media: { timestamp: "40", payload: "AAAA" } }), // no track
      mediaMessage({ media: { track: "outbound", timestamp: "1234567", payload: "//8=" } }),
      mediaMessage({ media: { track: "", timestamp: "0", payload: "" } }),
      // Twilio's own field order.
      '{"event":"media","sequenceNumber":"4","media":{"track":"inbound","chunk":"2","timestamp":"20","payload":"fn5+"},"streamSid":"MZ1"}',
    ];
    for (const text of accepted) {
      expect(scanText(text), text).toBeDefined();
      expect(scanBytes(text), text).toEqual(scanText(text));
    }
  });

  it("leaves to the text path what scanTwilioMedia refuses, and timestamps that are not plain digits", () => {
    const refused = [
      mediaMessage({ streamSid: 'MZ"quoted"' }),
      mediaMessage({ streamSid: undefined }),
      mediaMessage({ sequenceNumber: 3 }),
      mediaMessage({ media: { timestamp: "5" } }),
      mediaMessage({}).replace('"event":"media"', '"event":"mark"'),
      `${mediaMessage({})} `,
      ` ${mediaMessage({})}`,
    ];
    for (const text of refused) {
      expect(scanText(text), text).toBeUndefined();
      expect(scanBytes(text), text).toBeUndefined();
    }
    for (const ts of ["1.5", "-3", "", "1e3", "12345678901234567"]) {
      expect(scanBytes(mediaMessage({ media: { timestamp: ts, payload: "AAAA" } })), ts).toBeUndefined();
    }
  });
});

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

  it("gives the session the frames the text path gives, on speech in chunks of every size", () => {
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
    const viaText = transport();
    for (const m of messages) viaText.t.handleMedia(scanTwilioMedia(m) as MediaFields);
    const viaBytes = transport();
    const span = mediaSpan();
    for (const m of messages) {
      const msg = Buffer.from(m);
      expect(scanTwilioMediaBytes(msg, span)).toBe(true);
      expect(viaBytes.t.handleMediaBytes(msg, span)).toBe(true);
    }
    expect(viaBytes.frames.length).toBe(Math.floor(ulaw.length / 160));
    expect(viaBytes.frames).toEqual(viaText.frames);
  });

  it("hands back a payload that is not plain Base64, untouched, for the text path", () => {
    const { t, frames } = transport();
    const msg = Buffer.from(mediaMessage({ media: { timestamp: "0", payload: "AAAA AAAA" } }));
    const span = mediaSpan();
    expect(scanTwilioMediaBytes(msg, span)).toBe(true);
    expect(t.handleMediaBytes(msg, span)).toBe(false);
    expect(frames).toEqual([]);
  });
});
