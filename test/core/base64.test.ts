// Base64 between byte arrays (src/core/base64.ts), against Node's Buffer codec (the reference it
// must agree with).
import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import {
  base64DecodedLength,
  base64EncodedLength,
  decodeBase64Into,
  decodeBase64Range,
  encodeBase64Into,
} from "../../src/core/base64.ts";
import { seededBytes } from "../helpers/noise.ts";

describe("base64", () => {
  it("encodes every length and byte value as Buffer does, into a range of a reused buffer", () => {
    const out = new Uint8Array(400);
    for (let n = 0; n <= 260; n++) {
      const src = seededBytes(n + 7, n);
      const written = encodeBase64Into(src, 3, 3 + n, out, 5);
      const expected = Buffer.from(src.subarray(3, 3 + n)).toString("base64");
      expect(written).toBe(base64EncodedLength(n));
      expect(Buffer.from(out.subarray(5, 5 + written)).toString("latin1")).toBe(expected);
    }
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const n = encodeBase64Into(all, 0, 256, out);
    expect(Buffer.from(out.subarray(0, n)).toString("latin1")).toBe(Buffer.from(all).toString("base64"));
    expect(() => encodeBase64Into(all, 0, 256, new Uint8Array(10))).toThrow(RangeError);
  });

  it("decodes what Buffer encodes, padded or not, from a range of a larger message", () => {
    const out = new Uint8Array(300);
    for (let n = 0; n <= 260; n++) {
      const src = seededBytes(n, 1000 + n);
      for (const text of [
        Buffer.from(src).toString("base64"),
        Buffer.from(src).toString("base64").replace(/=+$/, ""),
        Buffer.from(src).toString("base64url"),
      ]) {
        const msg = Buffer.from(`{"payload":"${text}"}`, "latin1");
        const start = 12;
        const end = msg.length - 2;
        expect(base64DecodedLength(msg, start, end)).toBe(n);
        out.fill(0xee);
        const written = decodeBase64Into(msg, start, end, out, 3);
        expect(written).toBe(n);
        expect([...out.subarray(3, 3 + n)]).toEqual([...src]);
        expect(out[3 + n]).toBe(0xee); // nothing past the end
      }
    }
  });

  it("decodes a Twilio media payload (160 bytes of µ-law) as Buffer does", () => {
    const payload = Buffer.from(seededBytes(160, 42)).toString("base64");
    const out = new Uint8Array(160);
    expect(decodeBase64Into(Buffer.from(payload, "latin1"), 0, payload.length, out)).toBe(160);
    expect([...out]).toEqual([...Buffer.from(payload, "base64")]);
  });

  it("refuses text outside the alphabet (whitespace, escapes, stray padding) instead of guessing", () => {
    const out = new Uint8Array(64);
    for (const bad of ["AAAA\nAAAA", "AA\\/AAAA", "AA=AAAAA", "A", "AAAAA", "AA AA"]) {
      const msg = Buffer.from(bad, "latin1");
      expect(decodeBase64Into(msg, 0, msg.length, out), JSON.stringify(bad)).toBe(-1);
    }
    expect(decodeBase64Into(Buffer.from("AAAA"), 0, 4, new Uint8Array(2))).toBe(-1); // no room
  });

  it("decodes a range into a new array of its own length, or refuses it as decodeBase64Into does", () => {
    for (let n = 0; n <= 40; n++) {
      const src = seededBytes(n, 2000 + n);
      const msg = Buffer.from(`"${Buffer.from(src).toString("base64")}"`, "latin1");
      expect(decodeBase64Range(msg, 1, msg.length - 1)).toEqual(new Uint8Array(src));
    }
    for (const bad of ["AAAA\nAAAA", "AA=AAAAA", "A", "AA AA"]) {
      const msg = Buffer.from(bad, "latin1");
      expect(decodeBase64Range(msg, 0, msg.length), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it("encodes whole 3-byte groups one after another into one buffer, as a streamed body is written", () => {
    const src = seededBytes(300, 3000);
    const out = new Uint8Array(base64EncodedLength(300));
    let at = 0;
    for (let i = 0; i < 300; i += 30) at += encodeBase64Into(src, i, i + 30, out, at);
    expect(Buffer.from(out.subarray(0, at)).toString("latin1")).toBe(Buffer.from(src).toString("base64"));
  });
});
