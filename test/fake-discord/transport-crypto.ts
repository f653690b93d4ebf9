// Discord's voice transport encryption, aead_aes256_gcm_rtpsize: the 12-byte RTP header (plus the
// extension preamble when the X bit is set) is the AAD, the payload is encrypted, and a 32-bit
// counter after the tag is the nonce (zero-padded to 12 bytes).
import { createCipheriv, createDecipheriv } from "node:crypto";

export const TRANSPORT_MODE = "aead_aes256_gcm_rtpsize";
const TAG = 16;
const COUNTER = 4;

function nonceOf(counter: number): Buffer {
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(counter >>> 0, 0);
  return nonce;
}

/** An RTP packet carrying `payload` (Opus, or a DAVE frame of it). */
export function sealRtp(
  key: Uint8Array,
  header: { sequence: number; timestamp: number; ssrc: number },
  payload: Uint8Array,
  counter: number,
): Buffer {
  const rtp = Buffer.alloc(12);
  rtp[0] = 0x80;
  rtp[1] = 0x78;
  rtp.writeUInt16BE(header.sequence & 0xffff, 2);
  rtp.writeUInt32BE(header.timestamp >>> 0, 4);
  rtp.writeUInt32BE(header.ssrc >>> 0, 8);
  const cipher = createCipheriv("aes-256-gcm", key, nonceOf(counter));
  cipher.setAAD(rtp);
  const body = Buffer.concat([cipher.update(payload), cipher.final()]);
  const tail = Buffer.alloc(COUNTER);
  tail.writeUInt32BE(counter >>> 0, 0);
  return Buffer.concat([rtp, body, cipher.getAuthTag(), tail]);
}

/** The payload of a sealed RTP packet, and its SSRC; undefined if it does not authenticate. */
export function openRtp(key: Uint8Array, packet: Buffer): { ssrc: number; payload: Buffer } | undefined {
  if (packet.length < 12 + TAG + COUNTER || packet[0]! >> 6 !== 2) return undefined;
  let headerSize = 12 + 4 * (packet[0]! & 0x0f);
  const extension = (packet[0]! & 0x10) !== 0;
  if (extension) headerSize += 4;
  const counter = packet.readUInt32BE(packet.length - COUNTER);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, nonceOf(counter));
    decipher.setAAD(packet.subarray(0, headerSize));
    decipher.setAuthTag(packet.subarray(packet.length - COUNTER - TAG, packet.length - COUNTER));
    let payload = Buffer.concat([
      decipher.update(packet.subarray(headerSize, packet.length - COUNTER - TAG)),
      decipher.final(),
    ]);
    if (extension) {
      // The extension body is encrypted with the payload: its length is in the preamble.
      const words = packet.readUInt16BE(headerSize - 2);
      payload = payload.subarray(4 * words);
    }
    return { ssrc: packet.readUInt32BE(8), payload };
  } catch {
    return undefined;
  }
}
