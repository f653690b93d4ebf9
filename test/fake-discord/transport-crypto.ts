// Discord voice transport encryption as the voice server does it, for the two "rtpsize" AEAD modes: the
// packet is the RTP header ‖ ciphertext ‖ 16-byte tag ‖ 32-bit big-endian nonce counter. The nonce is the
// counter followed by zero bytes (12 in all for AES-256-GCM, 24 for XChaCha20-Poly1305); the AAD is the RTP
// header, plus the 4-byte extension preamble (0xBEDE + length) when the X bit is set, the extension body
// itself being encrypted with the payload. node:crypto has ChaCha20-Poly1305 but not its X variant, so the
// HChaCha20 subkey step (draft-irtf-cfrg-xchacha §2.2) is done here.

import { createCipheriv, createDecipheriv } from "node:crypto";

export const AES_GCM_MODE = "aead_aes256_gcm_rtpsize";
export const XCHACHA_MODE = "aead_xchacha20_poly1305_rtpsize";
export type TransportMode = typeof AES_GCM_MODE | typeof XCHACHA_MODE;
export const TRANSPORT_MODES: readonly TransportMode[] = [AES_GCM_MODE, XCHACHA_MODE];

const RTP_HEADER = 12;
const TAG = 16;
const NONCE_SUFFIX = 4;

export interface RtpFields {
  sequence: number;
  timestamp: number;
  ssrc: number;
}

/** Builds one encrypted RTP packet (payload type 0x78, Opus) the way Discord's clients and server send it. */
export function sealRtp(
  mode: TransportMode,
  key: Uint8Array,
  rtp: RtpFields,
  nonceCounter: number,
  payload: Uint8Array,
): Buffer {
  const header = Buffer.alloc(RTP_HEADER);
  header[0] = 0x80;
  header[1] = 0x78;
  header.writeUInt16BE(rtp.sequence & 0xffff, 2);
  header.writeUInt32BE(rtp.timestamp >>> 0, 4);
  header.writeUInt32BE(rtp.ssrc >>> 0, 8);
  const nonce = Buffer.alloc(mode === AES_GCM_MODE ? 12 : 24);
  nonce.writeUInt32BE(nonceCounter >>> 0, 0);
  const cipher =
    mode === AES_GCM_MODE
      ? createCipheriv("aes-256-gcm", key, nonce)
      : createCipheriv("chacha20-poly1305", hchacha20(key, nonce), chachaNonce(nonce), {
          authTagLength: TAG,
        });
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(payload), cipher.final()]);
  return Buffer.concat([header, body, cipher.getAuthTag(), nonce.subarray(0, NONCE_SUFFIX)]);
}

export interface OpenedRtp extends RtpFields {
  /** The decrypted payload with any RTP header extension body removed. */
  payload: Buffer;
}

/** Decrypts a packet sealed as above; throws if the tag does not verify or the packet is too short. */
export function openRtp(mode: TransportMode, key: Uint8Array, packet: Buffer): OpenedRtp {
  if (packet.length < RTP_HEADER + TAG + NONCE_SUFFIX) {
    throw new RangeError(`RTP packet of ${packet.length} bytes is shorter than header, tag and nonce`);
  }
  const extension = (packet[0]! & 0x10) !== 0;
  const aadLength = RTP_HEADER + (extension ? 4 : 0);
  const nonce = Buffer.alloc(mode === AES_GCM_MODE ? 12 : 24);
  packet.copy(nonce, 0, packet.length - NONCE_SUFFIX);
  const tagStart = packet.length - NONCE_SUFFIX - TAG;
  const decipher =
    mode === AES_GCM_MODE
      ? createDecipheriv("aes-256-gcm", key, nonce)
      : createDecipheriv("chacha20-poly1305", hchacha20(key, nonce), chachaNonce(nonce), {
          authTagLength: TAG,
        });
  decipher.setAAD(packet.subarray(0, aadLength));
  decipher.setAuthTag(packet.subarray(tagStart, tagStart + TAG));
  let payload = Buffer.concat([decipher.update(packet.subarray(aadLength, tagStart)), decipher.final()]);
  if (extension) payload = payload.subarray(4 * packet.readUInt16BE(14));
  return {
    sequence: packet.readUInt16BE(2),
    timestamp: packet.readUInt32BE(4),
    ssrc: packet.readUInt32BE(8),
    payload,
  };
}

/** The 12-byte ChaCha20 nonce XChaCha20 uses after HChaCha20: four zero bytes, then nonce bytes 16–23. */
function chachaNonce(nonce24: Buffer): Buffer {
  const out = Buffer.alloc(12);
  nonce24.copy(out, 4, 16, 24);
  return out;
}

/** HChaCha20: the ChaCha20 block function's 20 rounds without the final addition, words 0–3 and 12–15 out. */
export function hchacha20(key: Uint8Array, nonce24: Uint8Array): Buffer {
  const k = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  const n = Buffer.from(nonce24.buffer, nonce24.byteOffset, nonce24.byteLength);
  const s = new Uint32Array(16);
  s.set([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
  for (let i = 0; i < 8; i++) s[4 + i] = k.readUInt32LE(4 * i);
  for (let i = 0; i < 4; i++) s[12 + i] = n.readUInt32LE(4 * i);
  const quarter = (a: number, b: number, c: number, d: number): void => {
    s[a] = (s[a]! + s[b]!) >>> 0;
    s[d] = rotl(s[d]! ^ s[a]!, 16);
    s[c] = (s[c]! + s[d]!) >>> 0;
    s[b] = rotl(s[b]! ^ s[c]!, 12);
    s[a] = (s[a]! + s[b]!) >>> 0;
    s[d] = rotl(s[d]! ^ s[a]!, 8);
    s[c] = (s[c]! + s[d]!) >>> 0;
    s[b] = rotl(s[b]! ^ s[c]!, 7);
  };
  for (let round = 0; round < 10; round++) {
    quarter(0, 4, 8, 12);
    quarter(1, 5, 9, 13);
    quarter(2, 6, 10, 14);
    quarter(3, 7, 11, 15);
    quarter(0, 5, 10, 15);
    quarter(1, 6, 11, 12);
    quarter(2, 7, 8, 13);
    quarter(3, 4, 9, 14);
  }
  const out = Buffer.alloc(32);
  [0, 1, 2, 3, 12, 13, 14, 15].forEach((word, i) => {
    out.writeUInt32LE(s[word]!, 4 * i);
  });
  return out;
}

function rotl(v: number, by: number): number {
  return ((v << by) | (v >>> (32 - by))) >>> 0;
}
