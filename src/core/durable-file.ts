// Files that must survive a crash or a power cut once written: the bytes are fsynced under a
// temporary name, renamed into place, and the directory entry is flushed. A reader sees the old
// file or the whole new one, never a part; an interrupted write leaves only a `.tmp-*` file.
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/** Temporary files of writeFileDurably start with this (so a directory scan can skip or remove them). */
export const TEMP_PREFIX = ".tmp-";

/** Writes `data` to `path` atomically and durably (see above). */
export async function writeFileDurably(path: string, data: Uint8Array): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `${TEMP_PREFIX}${randomBytes(6).toString("hex")}-${basename(path)}`);
  try {
    const fh = await open(tmp, "wx");
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  await fsyncDir(dir);
}

/** Makes a rename durable: the directory entry itself is flushed. */
export async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
