// The transport cipher both ways, on both backends (the OpenSSL addon and node:crypto), against the
// fake voice server's own implementation of aead_aes256_gcm_rtpsize (written from Discord's
// documentation): what one seals the other opens, and a packet altered anywhere does not open.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  AEAD_TRAILER,
  NodeCryptoAead,
  TRANSPORT_AEAD_BACKEND,
  type TransportAead,
  transportAead,
} from "../../../bridges/discord/transport-aead.ts";
import { AES_GCM_MODE, openRtp, sealRtp } from "../../fake-discord/transport-crypto.ts";

const backends: Array<[string, (key: Uint8Array) => TransportAead]> = [
  ["the session's (OpenSSL addon when built)", transportAead],
  ["node:crypto", (key) => new NodeCryptoAead(key)],
];

describe("transport AEAD", () => {
  it("runs on the native addon here (native/build.sh built it)", () => {
    expect(TRANSPORT_AEAD_BACKEND).toBe("openssl-addon");
  });

  it("keeps one context per session key", () => {
    const key = new Uint8Array(randomBytes(32));
    expect(transportAead(key)).toBe(transportAead(key));
    expect(transportAead(new Uint8Array(key))).not.toBe(transportAead(key));
  });

  for (const [name, make] of backends) {
    describe(name, () => {
      it("opens in place what the voice server seals, for every payload size and nonce", () => {
        const key = new Uint8Array(randomBytes(32));
        const aead = make(key);
        for (const [size, nonce] of [
          [0, 0],
          [1, 1],
          [3, 2 ** 32 - 1],
          [160, 12345],
          [1275, 7],
        ] as const) {
          const payload = randomBytes(size);
          const packet = sealRtp(
            AES_GCM_MODE,
            key,
            { sequence: 9, timestamp: 960, ssrc: 42 },
            nonce,
            payload,
          );
          const length = aead.open(packet, 12);
          expect(length).toBe(size);
          expect(packet.subarray(12, 12 + length)).toEqual(payload);
        }
      });

      it("refuses a packet altered in its header, body, tag or nonce, or too short", () => {
        const key = new Uint8Array(randomBytes(32));
        const aead = make(key);
        const good = sealRtp(AES_GCM_MODE, key, { sequence: 1, timestamp: 2, ssrc: 3 }, 77, randomBytes(60));
        for (const at of [2, 12, 40, good.length - 10, good.length - 1]) {
          const bad = Buffer.from(good);
          bad[at]! ^= 0x01;
          expect(aead.open(bad, 12)).toBe(-1);
        }
        expect(aead.open(good.subarray(0, 12 + AEAD_TRAILER - 1), 12)).toBe(-1);
        // Another session's key.
        expect(make(new Uint8Array(randomBytes(32))).open(Buffer.from(good), 12)).toBe(-1);
        expect(aead.open(Buffer.from(good), 12)).toBe(60);
      });

      it("seals what the voice server opens", () => {
        const key = new Uint8Array(randomBytes(32));
        const aead = make(key);
        for (const [size, nonce] of [
          [1, 0],
          [90, 2 ** 32 - 1],
          [1275, 3],
        ] as const) {
          const payload = randomBytes(size);
          const out = Buffer.alloc(12 + size + AEAD_TRAILER);
          out[0] = 0x80;
          out[1] = 0x78;
          out.writeUInt16BE(500, 2);
          out.writeUInt32BE(48000, 4);
          out.writeUInt32BE(0xcafe, 8);
          aead.seal(out, 12, payload, nonce);
          const opened = openRtp(AES_GCM_MODE, key, out);
          expect(opened.payload).toEqual(payload);
          expect([opened.sequence, opened.timestamp, opened.ssrc]).toEqual([500, 48000, 0xcafe]);
          expect(out.readUInt32BE(out.length - 4)).toBe(nonce);
        }
      });

      it("says which size is wrong rather than writing out of bounds", () => {
        const aead = make(new Uint8Array(randomBytes(32)));
        expect(() => aead.seal(Buffer.alloc(12 + 10 + AEAD_TRAILER - 1), 12, randomBytes(10), 0)).toThrow(
          /header/,
        );
      });
    });
  }
});
