// Image dimensions from the header bytes of PNG, JPEG, GIF and WebP: what the scripted engine
// "sees" and what image token counts are based on. Pure.
import type { Sniffed } from "./sniff.ts";

export interface ImageInfo {
  format: string;
  width: number;
  height: number;
}

/** Width and height, or undefined when the header is truncated or malformed. */
export function imageInfo(b: Uint8Array, sniffed: Sniffed): ImageInfo | undefined {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const dims = (() => {
    switch (sniffed.format) {
      case "png":
        return b.length >= 24 ? [v.getUint32(16), v.getUint32(20)] : undefined;
      case "gif":
        return b.length >= 10 ? [v.getUint16(6, true), v.getUint16(8, true)] : undefined;
      case "webp":
        return webpDims(b, v);
      case "jpeg":
        return jpegDims(b, v);
      default:
        return undefined;
    }
  })();
  if (!dims || !(dims[0]! > 0) || !(dims[1]! > 0)) return undefined;
  return { format: sniffed.format, width: dims[0]!, height: dims[1]! };
}

function webpDims(b: Uint8Array, v: DataView): number[] | undefined {
  if (b.length < 30) return undefined;
  const chunk = String.fromCharCode(...b.subarray(12, 16));
  if (chunk === "VP8 ") return [v.getUint16(26, true) & 0x3fff, v.getUint16(28, true) & 0x3fff];
  if (chunk === "VP8L") {
    const bits = v.getUint32(21, true);
    return [(bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1];
  }
  if (chunk === "VP8X") {
    const w = 1 + (b[24]! | (b[25]! << 8) | (b[26]! << 16));
    const h = 1 + (b[27]! | (b[28]! << 8) | (b[29]! << 16));
    return [w, h];
  }
  return undefined;
}

/** Walks JPEG segments to the first start-of-frame marker (SOF0–SOF15 except DHT/JPG/DAC). */
function jpegDims(b: Uint8Array, v: DataView): number[] | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += 2;
      continue;
    }
    const len = v.getUint16(i + 2);
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) return [v.getUint16(i + 7), v.getUint16(i + 5)];
    i += 2 + len;
  }
  return undefined;
}
