// Discord's voice transport encryption in aead_aes256_gcm_rtpsize, both ways, for one session's key:
// [RTP header (+ the 4-byte extension preamble when the X bit is set): the AAD][ciphertext][16-byte
// tag][4-byte big-endian nonce suffix], the GCM nonce being the suffix and 8 zero bytes.
//
// The native addon (native/discord/aes-gcm.c, built by native/build.sh) keeps one OpenSSL context
// per key and only resets the nonce per packet: about 0.5 µs a packet against 5–8 µs for node:crypto,
// which builds a new cipher (key expansion, a JS object, output buffers) for every one of the 50
// packets a second per member and per channel. Without the addon (not built), node:crypto does the
// same, slower. Both decrypt in place, so a received packet costs no new buffer.
import { Buffer } from "node:buffer";
import { createCipheriv, createDecipheriv } from "node:crypto";
import { optionalAddon } from "./optional-addon.ts";

export const AES_GCM_RTPSIZE = "aead_aes256_gcm_rtpsize";
const TAG = 16;
const NONCE_SUFFIX = 4;
/** What follows the payload: the tag and the nonce suffix. */
export const AEAD_TRAILER = TAG + NONCE_SUFFIX;

export interface TransportAead {
  /**
   * Decrypts `packet` in place (the plaintext starts at `headerSize`, where the ciphertext was);
   * returns its length, or -1 if the packet is too short or does not authenticate.
   */
  open(packet: Buffer, headerSize: number): number;
  /**
   * `out` holds the RTP header in its first `headerSize` bytes and is exactly header + payload +
   * AEAD_TRAILER long: writes the encrypted payload, the tag and the nonce suffix after the header.
   */
  seal(out: Buffer, headerSize: number, payload: Uint8Array, nonce: number): void;
}

interface Addon {
  aesGcm(key: Buffer): object;
  open(ctx: object, packet: Buffer, headerSize: number): number;
  seal(ctx: object, out: Buffer, headerSize: number, payload: Buffer, nonce: number): void;
}

const addon = optionalAddon<Addon>("discord-aes-gcm.node");

/** Which implementation serves this process: the addon, or node:crypto when it was not built. */
export const TRANSPORT_AEAD_BACKEND: "openssl-addon" | "node-crypto" = addon
  ? "openssl-addon"
  : "node-crypto";

const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

class NativeAead implements TransportAead {
  readonly #ctx: object;
  readonly #addon: Addon;
  constructor(a: Addon, key: Uint8Array) {
    this.#addon = a;
    this.#ctx = a.aesGcm(Buffer.from(key));
  }
  open(packet: Buffer, headerSize: number): number {
    return this.#addon.open(this.#ctx, packet, headerSize);
  }
  seal(out: Buffer, headerSize: number, payload: Uint8Array, nonce: number): void {
    this.#addon.seal(this.#ctx, out, headerSize, asBuffer(payload), nonce);
  }
}

export class NodeCryptoAead implements TransportAead {
  readonly #key: Buffer;
  readonly #nonce = Buffer.alloc(12);
  constructor(key: Uint8Array) {
    this.#key = Buffer.from(key);
  }
  open(packet: Buffer, headerSize: number): number {
    const body = packet.length - headerSize - AEAD_TRAILER;
    if (body < 0) return -1;
    packet.copy(this.#nonce, 0, packet.length - NONCE_SUFFIX);
    const d = createDecipheriv("aes-256-gcm", this.#key, this.#nonce);
    d.setAAD(packet.subarray(0, headerSize));
    d.setAuthTag(packet.subarray(headerSize + body, headerSize + body + TAG));
    try {
      const plain = d.update(packet.subarray(headerSize, headerSize + body));
      d.final();
      plain.copy(packet, headerSize);
      return plain.length;
    } catch {
      return -1;
    }
  }
  seal(out: Buffer, headerSize: number, payload: Uint8Array, nonce: number): void {
    if (out.length !== headerSize + payload.length + AEAD_TRAILER)
      throw new RangeError(`seal: ${out.length} bytes is not header + payload + ${AEAD_TRAILER}`);
    this.#nonce.writeUInt32BE(nonce >>> 0, 0);
    const c = createCipheriv("aes-256-gcm", this.#key, this.#nonce);
    c.setAAD(out.subarray(0, headerSize));
    const body = c.update(payload);
    c.final();
    body.copy(out, headerSize);
    c.getAuthTag().copy(out, headerSize + body.length);
    this.#nonce.copy(out, headerSize + body.length + TAG, 0, NONCE_SUFFIX);
  }
}

/** One context per key: a session's secret key is a new array at each Session Description. */
const byKey = new WeakMap<Uint8Array, TransportAead>();

/** The AES-256-GCM transport cipher for this session key (made once per key, then reused). */
export function transportAead(key: Uint8Array): TransportAead {
  let aead = byKey.get(key);
  if (!aead) {
    aead = addon ? new NativeAead(addon, key) : new NodeCryptoAead(key);
    byKey.set(key, aead);
  }
  return aead;
}
