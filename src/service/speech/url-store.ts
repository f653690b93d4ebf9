// Audio files of E4 `return_url`: written under the data dir with an unguessable name and served for
// 12 hours from their creation (the file's mtime), then answered with 404 and swept away.
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LIMITS } from "../../api/types/limits.ts";

const NAME = /^[A-Za-z0-9_-]{16,64}\.(mp3|wav|flac|opus|pcm)$/;

export class SpeechUrlStore {
  readonly dir: string;
  private readonly ttlMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(dataDir: string, ttlMs = LIMITS.audioUrlValiditySeconds * 1000) {
    this.dir = join(dataDir, "speech-urls");
    this.ttlMs = ttlMs;
    mkdirSync(this.dir, { recursive: true });
    this.sweeper = setInterval(() => this.sweep(), 10 * 60_000);
    this.sweeper.unref();
    this.sweep();
  }

  /** Stores a file; returns its name (the last path segment of its URL). */
  async put(bytes: Uint8Array, ext: string): Promise<string> {
    const name = `${randomBytes(18).toString("base64url")}.${ext}`;
    await writeFile(join(this.dir, name), bytes);
    return name;
  }

  /** The file's bytes while it is valid; undefined when unknown or expired. */
  async get(name: string): Promise<Uint8Array | undefined> {
    if (!NAME.test(name)) return undefined;
    const path = join(this.dir, name);
    try {
      if (Date.now() - statSync(path).mtimeMs >= this.ttlMs) {
        rmSync(path, { force: true });
        return undefined;
      }
      return await readFile(path);
    } catch {
      return undefined;
    }
  }

  sweep(): void {
    const now = Date.now();
    for (const name of readdirSync(this.dir)) {
      const path = join(this.dir, name);
      try {
        if (now - statSync(path).mtimeMs >= this.ttlMs) rmSync(path, { force: true });
      } catch {
        // removed meanwhile
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
