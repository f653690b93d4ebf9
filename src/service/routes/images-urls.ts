// Image files behind E7/E8 `url` results: written under <dataDir>/image-urls/<account>/ with an
// unguessable name, served to the same account for 2 hours from creation, then answered with 404
// and swept away. The creation time is the file's mtime, set from the store's clock, so the
// expiry survives a restart and a test can move the clock instead of waiting.
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { LIMITS } from "../../api/types/limits.ts";

const NAME = /^[A-Za-z0-9_-]{24}\.png$/;
const ACCOUNT = /^acct_[0-9a-f]{24}$/;

export class ImageUrlStore {
  readonly dir: string;
  readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(dataDir: string, now: () => number = Date.now, ttlMs = LIMITS.imageUrlValiditySeconds * 1000) {
    this.dir = join(dataDir, "image-urls");
    this.now = now;
    this.ttlMs = ttlMs;
    mkdirSync(this.dir, { recursive: true });
    this.sweeper = setInterval(() => this.sweep(), 10 * 60_000);
    this.sweeper.unref();
    this.sweep();
  }

  /** Stores a PNG for an account; returns its name (the last segment of its URL). */
  async put(account: string, png: Uint8Array): Promise<string> {
    if (!ACCOUNT.test(account)) throw new Error(`bad account id ${account}`);
    const dir = join(this.dir, account);
    mkdirSync(dir, { recursive: true });
    const name = `${randomBytes(18).toString("base64url")}.png`;
    const path = join(dir, name);
    await writeFile(path, png);
    const t = this.now() / 1000;
    await utimes(path, t, t);
    return name;
  }

  /** The PNG while it is valid for this account; undefined when unknown, another's, or expired. */
  async get(account: string, name: string): Promise<Buffer | undefined> {
    if (!NAME.test(name) || !ACCOUNT.test(account)) return undefined;
    const path = join(this.dir, account, name);
    try {
      if (this.expired(statSync(path).mtimeMs)) {
        rmSync(path, { force: true });
        return undefined;
      }
      return await readFile(path);
    } catch {
      return undefined;
    }
  }

  private expired(createdMs: number): boolean {
    return this.now() - createdMs >= this.ttlMs;
  }

  sweep(): void {
    for (const account of readdirSync(this.dir)) {
      const dir = join(this.dir, account);
      try {
        for (const name of readdirSync(dir)) {
          const path = join(dir, name);
          if (this.expired(statSync(path).mtimeMs)) rmSync(path, { force: true });
        }
      } catch {
        // removed meanwhile
      }
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
