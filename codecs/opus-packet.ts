// Reading an Opus packet's duration from its TOC byte (RFC 6716 §3.1), without decoding it.

/** Samples per frame at 48 kHz for each of the 32 TOC configurations. */
const FRAME_SAMPLES_48K = (() => {
  const silk = [480, 960, 1920, 2880]; // 10, 20, 40, 60 ms
  const hybrid = [480, 960]; // 10, 20 ms
  const celt = [120, 240, 480, 960]; // 2.5, 5, 10, 20 ms
  const table: number[] = [];
  for (let config = 0; config < 32; config++) {
    if (config < 12) table.push(silk[config % 4]!);
    else if (config < 16) table.push(hybrid[config % 2]!);
    else table.push(celt[config % 4]!);
  }
  return table;
})();

/** Number of frames in the packet (code 0: one, codes 1–2: two, code 3: count in the second byte). */
export function opusFrameCount(packet: Uint8Array): number {
  if (packet.length < 1) throw new RangeError("an Opus packet has at least one byte");
  const code = packet[0]! & 0x03;
  if (code === 0) return 1;
  if (code !== 3) return 2;
  if (packet.length < 2) throw new RangeError("Opus code-3 packet without its frame count byte");
  return packet[1]! & 0x3f;
}

/** Duration of the packet in samples at 48 kHz (what Ogg/Opus granule positions count). */
export function opusPacketSamples48k(packet: Uint8Array): number {
  return FRAME_SAMPLES_48K[packet[0]! >> 3]! * opusFrameCount(packet);
}

/** Whether the packet was coded as stereo (the TOC's s bit). */
export function opusPacketIsStereo(packet: Uint8Array): boolean {
  return packet.length > 0 && (packet[0]! & 0x04) !== 0;
}
