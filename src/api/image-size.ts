// Width and height read from an image header (PNG, JPEG, GIF, WebP), to check E8's 4096x4096
// input limit before uploading. Unknown formats return undefined and are left to the server.

export interface ImageDims {
  width: number;
  height: number;
}

export function imageDimensions(b: Uint8Array): ImageDims | undefined {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const ascii = (o: number, n: number) => String.fromCharCode(...b.subarray(o, o + n));
  // PNG: signature, then the IHDR chunk.
  if (b.length >= 24 && b[0] === 0x89 && ascii(1, 3) === "PNG") {
    return { width: dv.getUint32(16), height: dv.getUint32(20) };
  }
  // GIF: logical screen size, little-endian.
  if (b.length >= 10 && ascii(0, 3) === "GIF") {
    return { width: dv.getUint16(6, true), height: dv.getUint16(8, true) };
  }
  // WebP: RIFF container with a VP8 / VP8L / VP8X chunk.
  if (b.length >= 30 && ascii(0, 4) === "RIFF" && ascii(8, 4) === "WEBP") {
    const kind = ascii(12, 4);
    if (kind === "VP8 ")
      return { width: dv.getUint16(26, true) & 0x3fff, height: dv.getUint16(28, true) & 0x3fff };
    if (kind === "VP8L") {
      const bits = dv.getUint32(21, true);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    if (kind === "VP8X") {
      const w = b[24]! | (b[25]! << 8) | (b[26]! << 16);
      const h = b[27]! | (b[28]! << 8) | (b[29]! << 16);
      return { width: w + 1, height: h + 1 };
    }
    return undefined;
  }
  // JPEG: walk the segments to the first start-of-frame.
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    let o = 2;
    while (o + 9 < b.length) {
      if (b[o] !== 0xff) return undefined;
      const marker = b[o + 1]!;
      if (marker === 0xff) {
        o++;
        continue;
      }
      const len = dv.getUint16(o + 2);
      const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
      if (isSof) return { width: dv.getUint16(o + 7), height: dv.getUint16(o + 5) };
      o += 2 + len;
    }
  }
  return undefined;
}
