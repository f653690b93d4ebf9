// RTP packets (RFC 3550 §5.1): the fixed header parsed in place, and the 12-byte header we send.
// Parsing fills a caller-owned object instead of returning a new one, so a call's receive path
// allocates nothing per packet; a malformed packet yields the reason it was refused.

export const RTP_HEADER_BYTES = 12;

/** The header fields of one received packet; `payloadStart`/`payloadEnd` index the datagram. */
export interface RtpHeader {
  marker: boolean;
  payloadType: number;
  /** 16-bit sequence number as sent. */
  sequence: number;
  /** 32-bit timestamp as sent (unsigned). */
  timestamp: number;
  /** Synchronisation source (unsigned). */
  ssrc: number;
  payloadStart: number;
  payloadEnd: number;
}

export function emptyRtpHeader(): RtpHeader {
  return {
    marker: false,
    payloadType: 0,
    sequence: 0,
    timestamp: 0,
    ssrc: 0,
    payloadStart: 0,
    payloadEnd: 0,
  };
}

/** Why a datagram is not an RTP packet we can use. */
export type RtpRefusal = "short" | "version" | "padding" | "extension" | "rtcp";

/**
 * Reads the header of `packet` into `out`; returns undefined when it is usable, else why not.
 * CSRCs and a header extension are skipped; padding is removed from the payload. RTCP sent to the
 * RTP port (packet types 200–204 where marker and payload type sit, RFC 5761) is refused, not played.
 */
export function parseRtp(packet: Uint8Array, out: RtpHeader): RtpRefusal | undefined {
  const length = packet.length;
  if (length < RTP_HEADER_BYTES) return "short";
  const b0 = packet[0]!;
  if (b0 >> 6 !== 2) return "version";
  const b1 = packet[1]!;
  if (b1 >= 200 && b1 <= 204) return "rtcp";
  const pt = b1 & 0x7f;
  let start = RTP_HEADER_BYTES + (b0 & 0x0f) * 4;
  if (start > length) return "short";
  if (b0 & 0x10) {
    if (start + 4 > length) return "extension";
    const words = (packet[start + 2]! << 8) | packet[start + 3]!;
    start += 4 + words * 4;
    if (start > length) return "extension";
  }
  let end = length;
  if (b0 & 0x20) {
    const pad = packet[length - 1]!;
    if (pad === 0 || end - pad < start) return "padding";
    end -= pad;
  }
  out.marker = (b1 & 0x80) !== 0;
  out.payloadType = pt;
  out.sequence = (packet[2]! << 8) | packet[3]!;
  out.timestamp = ((packet[4]! << 24) | (packet[5]! << 16) | (packet[6]! << 8) | packet[7]!) >>> 0;
  out.ssrc = ((packet[8]! << 24) | (packet[9]! << 16) | (packet[10]! << 8) | packet[11]!) >>> 0;
  out.payloadStart = start;
  out.payloadEnd = end;
  return undefined;
}

/** Writes a 12-byte RTP header (no CSRC, extension or padding) at the start of `buf`. */
export function writeRtpHeader(
  buf: Uint8Array,
  marker: boolean,
  payloadType: number,
  sequence: number,
  timestamp: number,
  ssrc: number,
): void {
  buf[0] = 0x80;
  buf[1] = (marker ? 0x80 : 0) | (payloadType & 0x7f);
  buf[2] = (sequence >> 8) & 0xff;
  buf[3] = sequence & 0xff;
  buf[4] = (timestamp >>> 24) & 0xff;
  buf[5] = (timestamp >>> 16) & 0xff;
  buf[6] = (timestamp >>> 8) & 0xff;
  buf[7] = timestamp & 0xff;
  buf[8] = (ssrc >>> 24) & 0xff;
  buf[9] = (ssrc >>> 16) & 0xff;
  buf[10] = (ssrc >>> 8) & 0xff;
  buf[11] = ssrc & 0xff;
}

export interface RtpPacketFields {
  marker?: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
  csrcs?: readonly number[];
  /** Header extension: profile id and whole 32-bit words of data. */
  extension?: { profile: number; data: Uint8Array };
  /** Padding bytes to add (1–255), the last one holding the count. */
  padding?: number;
}

/** A whole packet in a new buffer, with any optional parts (for peers and tests, not the hot path). */
export function buildRtp(f: RtpPacketFields): Uint8Array {
  const csrcs = f.csrcs ?? [];
  if (csrcs.length > 15) throw new RangeError(`buildRtp: at most 15 CSRCs, got ${csrcs.length}`);
  const ext = f.extension;
  if (ext && ext.data.length % 4 !== 0)
    throw new RangeError(`buildRtp: extension data must be whole 32-bit words, got ${ext.data.length} bytes`);
  const pad = f.padding ?? 0;
  if (!Number.isInteger(pad) || pad < 0 || pad > 255)
    throw new RangeError(`buildRtp: padding is 0–255 bytes, got ${pad}`);
  const extBytes = ext ? 4 + ext.data.length : 0;
  const out = new Uint8Array(RTP_HEADER_BYTES + csrcs.length * 4 + extBytes + f.payload.length + pad);
  writeRtpHeader(out, f.marker ?? false, f.payloadType, f.sequence, f.timestamp, f.ssrc);
  out[0] = 0x80 | (pad ? 0x20 : 0) | (ext ? 0x10 : 0) | csrcs.length;
  const view = new DataView(out.buffer);
  let at = RTP_HEADER_BYTES;
  for (const c of csrcs) {
    view.setUint32(at, c >>> 0);
    at += 4;
  }
  if (ext) {
    view.setUint16(at, ext.profile);
    view.setUint16(at + 2, ext.data.length / 4);
    out.set(ext.data, at + 4);
    at += extBytes;
  }
  out.set(f.payload, at);
  at += f.payload.length;
  if (pad) out[out.length - 1] = pad;
  return out;
}

/** A random 32-bit value (initial SSRC and timestamp) and a random 16-bit one (initial sequence). */
export function random32(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}

export function random16(): number {
  return random32() & 0xffff;
}
