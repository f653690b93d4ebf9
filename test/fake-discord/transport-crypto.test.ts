import { createCipheriv } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  AES_GCM_MODE,
  hchacha20,
  openRtp,
  sealRtp,
  TRANSPORT_MODES,
  XCHACHA_MODE,
} from "./transport-crypto.ts";

const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const rtp = { sequence: 65535, timestamp: 0xfffffff0, ssrc: 0x01020304 };

describe("voice transport encryption", () => {
  it("HChaCha20 matches draft-irtf-cfrg-xchacha §2.2.1", () => {
    const nonce = Buffer.concat([Buffer.from("000000090000004a0000000031415927", "hex"), Buffer.alloc(8)]);
    expect(hchacha20(key, nonce).toString("hex")).toBe(
      "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc",
    );
  });

  for (const mode of TRANSPORT_MODES) {
    it(`${mode}: header, ciphertext, tag, then the counter; opens back; tampering is caught`, () => {
      const payload = Buffer.from("opus frame bytes");
      const packet = sealRtp(mode, key, rtp, 7, payload);
      expect(packet.length).toBe(12 + payload.length + 16 + 4);
      expect([...packet.subarray(0, 2)]).toEqual([0x80, 0x78]);
      expect(packet.readUInt32BE(packet.length - 4)).toBe(7);
      const opened = openRtp(mode, key, packet);
      expect(opened).toMatchObject(rtp);
      expect(opened.payload.equals(payload)).toBe(true);
      const tampered = Buffer.from(packet);
      tampered[3] = tampered[3]! ^ 1; // the header is authenticated
      expect(() => openRtp(mode, key, tampered)).toThrow();
      const otherMode = mode === AES_GCM_MODE ? XCHACHA_MODE : AES_GCM_MODE;
      expect(() => openRtp(otherMode, key, packet)).toThrow();
    });
  }

  it("an RTP header extension: the 0xBEDE preamble is AAD, its body is encrypted and stripped", () => {
    // Seal [extension body ‖ payload] under a header with X set, as Discord's clients do.
    const body = Buffer.from([0x10, 0xaa, 0, 0]); // one 4-byte extension word
    const payload = Buffer.from([1, 2, 3, 4, 5]);
    const plain = sealRtp(AES_GCM_MODE, key, rtp, 1, payload);
    const header = Buffer.from(plain.subarray(0, 12));
    header[0] = header[0]! | 0x10;
    const preamble = Buffer.from([0xbe, 0xde, 0, 1]);
    const nonce = Buffer.alloc(12);
    nonce.writeUInt32BE(1, 0);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(Buffer.concat([header, preamble]));
    const enc = Buffer.concat([cipher.update(Buffer.concat([body, payload])), cipher.final()]);
    const packet = Buffer.concat([header, preamble, enc, cipher.getAuthTag(), nonce.subarray(0, 4)]);
    expect(openRtp(AES_GCM_MODE, key, packet).payload.equals(payload)).toBe(true);
  });
});
