// Reads the UDP datagrams of a classic libpcap capture (SIPp's own RTP captures): Ethernet or
// Linux cooked link layer, IPv4, either byte order. Enough to replay their payloads in tests.
import { readFileSync } from "node:fs";

export interface PcapDatagram {
  /** Capture time, seconds. */
  time: number;
  srcPort: number;
  dstPort: number;
  payload: Uint8Array;
}

export function readPcapUdp(file: string): PcapDatagram[] {
  const bytes = readFileSync(file);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0, true);
  const le = magic === 0xa1b2c3d4 || magic === 0xa1b23c4d;
  if (!le && view.getUint32(0, false) !== 0xa1b2c3d4 && view.getUint32(0, false) !== 0xa1b23c4d)
    throw new Error(`${file}: not a libpcap file (magic ${magic.toString(16)})`);
  const nano = (le ? magic : view.getUint32(0, false)) === 0xa1b23c4d;
  const link = view.getUint32(20, le);
  const linkHeader = link === 1 ? 14 : link === 113 ? 16 : -1;
  if (linkHeader < 0) throw new Error(`${file}: link type ${link} is neither Ethernet nor Linux cooked`);
  const out: PcapDatagram[] = [];
  let at = 24;
  while (at + 16 <= bytes.length) {
    const sec = view.getUint32(at, le);
    const frac = view.getUint32(at + 4, le);
    const captured = view.getUint32(at + 8, le);
    const frame = at + 16;
    at = frame + captured;
    const ip = frame + linkHeader;
    if (bytes[ip]! >> 4 !== 4 || bytes[ip + 9] !== 17) continue;
    const udp = ip + (bytes[ip]! & 0x0f) * 4;
    const udpLength = view.getUint16(udp + 4, false);
    out.push({
      time: sec + frac / (nano ? 1e9 : 1e6),
      srcPort: view.getUint16(udp, false),
      dstPort: view.getUint16(udp + 2, false),
      payload: bytes.subarray(udp + 8, Math.min(at, udp + udpLength)),
    });
  }
  return out;
}
