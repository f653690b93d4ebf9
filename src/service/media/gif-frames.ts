// Counts the frames of a GIF by walking its block structure from a file, in bounded memory:
// "static gif" means exactly one image descriptor.
import { open } from "node:fs/promises";

const CHUNK = 64 * 1024;

/**
 * Number of image descriptors in a GIF (a file path, or bytes in memory); stops counting at
 * `stopAt`. Throws if the block structure is malformed.
 */
export async function gifFrameCount(source: string | Buffer, stopAt = 2): Promise<number> {
  const fh = typeof source === "string" ? await open(source, "r") : undefined;
  const buf = typeof source === "string" ? Buffer.allocUnsafe(CHUNK) : source;
  let bufStart = 0;
  let bufLen = fh ? 0 : buf.length;
  let pos = 0;
  const byte = async (): Promise<number> => {
    if (pos >= bufStart + bufLen) {
      if (!fh) throw new Error("GIF ends before its trailer");
      bufStart = pos;
      bufLen = (await fh.read(buf, 0, CHUNK, pos)).bytesRead;
      if (bufLen === 0) throw new Error("GIF ends before its trailer");
    }
    return buf[pos++ - bufStart]!;
  };
  const skipSubBlocks = async () => {
    for (let size = await byte(); size !== 0; size = await byte()) pos += size;
  };
  try {
    pos = 10;
    const flags = await byte();
    pos = 13 + (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0);
    let frames = 0;
    for (;;) {
      const intro = await byte();
      if (intro === 0x3b) return frames;
      if (intro === 0x21) {
        pos += 1;
        await skipSubBlocks();
      } else if (intro === 0x2c) {
        if (++frames >= stopAt) return frames;
        pos += 8;
        const local = await byte();
        pos += (local & 0x80 ? 3 * 2 ** ((local & 7) + 1) : 0) + 1;
        await skipSubBlocks();
      } else {
        throw new Error(`GIF block 0x${intro.toString(16)} is not valid`);
      }
    }
  } finally {
    await fh?.close();
  }
}
