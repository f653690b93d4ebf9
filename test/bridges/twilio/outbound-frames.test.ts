// Outbound media and mark messages built as WebSocket frames in bytes: each frame must be a valid
// unmasked text frame (RFC 6455 §5.2) whose payload is exactly AppMessageWriter's string.
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { OutboundFrames } from "../../../bridges/twilio/outbound-frames.ts";
import { AppMessageWriter } from "../../../bridges/twilio/protocol.ts";
import { mulawEncode } from "../../../codecs/g711.ts";
import { speak } from "../../helpers/speech.ts";

/** Splits bytes into the text payloads of the frames they hold, checking each header. */
function framesOf(bytes: Buffer): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < bytes.length) {
    expect(bytes[at]).toBe(0x81); // FIN, text
    const b1 = bytes[at + 1]!;
    expect(b1 & 0x80).toBe(0); // server frames are not masked
    let length = b1 & 0x7f;
    at += 2;
    if (length === 126) {
      length = bytes.readUInt16BE(at);
      expect(length).toBeGreaterThanOrEqual(126); // shortest form
      at += 2;
    } else if (length === 127) {
      length = Number(bytes.readBigUInt64BE(at));
      expect(length).toBeGreaterThanOrEqual(65536);
      at += 8;
    }
    out.push(bytes.toString("utf8", at, at + length));
    at += length;
  }
  expect(at).toBe(bytes.length);
  return out;
}

describe("OutboundFrames", () => {
  const sid = "MZ18ad3ab5a668481ce02b83e7395059f0";
  const writer = new AppMessageWriter(sid);

  it("frames media and marks exactly as AppMessageWriter writes them, several per take", () => {
    const ulaw = mulawEncode(speak("Thanks for calling", { rate: 8000 }));
    const frames = new OutboundFrames(sid);
    const expected: string[] = [];
    for (let at = 0, i = 0; at + 160 <= ulaw.length; at += 160, i++) {
      const chunk = ulaw.subarray(at, at + 160);
      frames.media(chunk);
      expected.push(writer.media(Buffer.from(chunk).toString("base64")));
      if (i % 5 === 4) {
        frames.mark(`vb${i}`);
        expected.push(writer.mark(`vb${i}`));
      }
    }
    expect(frames.pending).toBeGreaterThan(4096); // grew past its first size on the way
    expect(framesOf(frames.take())).toEqual(expected);
    expect(frames.pending).toBe(0);
  });

  it("uses each length form: short, 16-bit and 64-bit, and JSON-escapes odd mark names", () => {
    const frames = new OutboundFrames('MZ"odd\\sid');
    const odd = new AppMessageWriter('MZ"odd\\sid');
    const sizes = [0, 1, 2, 3, 50, 160, 60_000];
    const expected: string[] = [];
    for (const n of sizes) {
      const audio = Uint8Array.from({ length: n }, (_, i) => (i * 131 + n) & 0xff);
      frames.media(audio);
      expected.push(odd.media(Buffer.from(audio).toString("base64")));
    }
    for (const name of ["", "a", 'quote"d', "back\\slash", "tab\there", "café", "☎"]) {
      frames.mark(name);
      expected.push(odd.mark(name));
    }
    const bytes = frames.take();
    expect(framesOf(bytes)).toEqual(expected);
    expect(bytes[1]).toBe(expected[0]!.length); // the empty payload's message is under 126 bytes
  });

  it("reuses its buffer after a write the socket finished, and takes a new one after a write it holds", () => {
    const frames = new OutboundFrames(sid);
    frames.media(new Uint8Array(160));
    const first = frames.take();
    frames.sent(true);
    frames.media(new Uint8Array(160).fill(0xff));
    const second = frames.take();
    expect(second.buffer).toBe(first.buffer);
    frames.sent(false); // the socket still holds `second`
    const kept = Buffer.from(second);
    frames.media(new Uint8Array(160));
    const third = frames.take();
    expect(third.buffer).not.toBe(second.buffer);
    expect(second).toEqual(kept); // not overwritten
  });
});
