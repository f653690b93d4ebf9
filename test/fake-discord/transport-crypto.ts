// Discord voice transport encryption, `aead_aes256_gcm_rtpsize`, as the voice server does it: the packet is
// the RTP header ‖ AES-256-GCM ciphertext ‖ 16-byte tag ‖ 32-bit big-endian nonce counter. The nonce is the
// counter followed by eight zero bytes; the AAD is the RTP header, plus the 4-byte extension preamble
// (0xBEDE + length) when the X bit is set, the extension body itself being encrypted with the payload.

import { createCipheriv, createDecipheriv } from "node:crypto";

export const TRANSPORT_MODE = "aead_aes256_gcm_rtpsize";
const RTP_HEADER = 12;
const TAG = 16;
const NONCE_SUFFIX = 4;

export interface RtpFields {
  sequence: number;
  timestamp: number;
  ssrc: number;
}

/** Builds one encrypted RTP packet (payload type 0x78, Opus) the way Discord's clients and server send it. */
export function sealRtp(key: Uint8Array, rtp: RtpFields, nonceCounter: number, payload: Uint8Array): Buffer {
  const header = Buffer.alloc(RTP_HEADER);
  header[0] = 0x80;
  header[1] = 0x78;
  header.writeUInt16BE(rtp.sequence & 0xffff, 2);
  header.writeUInt32BE(rtp.timestamp >>> 0, 4);
  header.writeUInt32BE(rtp.ssrc >>> 0, 8);
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(nonceCounter >>> 0, 0);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(payload), cipher.final()]);
  return Buffer.concat([header, body, cipher.getAuthTag(), nonce.subarray(0, NONCE_SUFFIX)]);
}

export interface OpenedRtp extends RtpFields {
  /** The decrypted payload with any RTP header extension body removed. */
  payload: Buffer;
}

/** Decrypts a packet sealed as above; throws if the tag does not verify or the packet is too short. */
export function openRtp(key: Uint8Array, packet: Buffer): OpenedRtp {
  if (packet.length < RTP_HEADER + TAG + NONCE_SUFFIX) {
    throw new RangeError(`RTP packet of ${packet.length} bytes is shorter than header, tag and nonce`);
  }
  const extension = (packet[0] & 0x10) !== 0;
  const aadLength = RTP_HEADER + (extension ? 4 : 0);
  const nonce = Buffer.alloc(12);
  packet.copy(nonce, 0, packet.length - NONCE_SUFFIX);
  const tagStart = packet.length - NONCE_SUFFIX - TAG;
  const decipher = createDecipheriv("aes-256-gcm", key, nonce);
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
