// The bridge's do-not-call list: a file of numbers, one a line (`#` starts a comment), that no
// campaign dials. Read at start and again whenever the file changes (its modification time is
// looked at every few seconds, off the call path); a number is compared with separators dropped.
import { readFile, stat } from "node:fs/promises";
import type { Logger } from "../core/log.ts";

const normal = (n: string) => n.trim().replace(/[\s().-]/g, "");

export class DoNotCallList {
  #numbers = new Set<string>();
  #mtime = -1;
  #timer: NodeJS.Timeout | undefined;
  readonly #path: string | undefined;
  readonly #log: Logger;

  private constructor(path: string | undefined, log: Logger) {
    this.#path = path;
    this.#log = log;
  }

  /** Reads `path` (none: an empty list) and watches it for changes. */
  static async open(path: string | undefined, log: Logger, everyMs = 5000): Promise<DoNotCallList> {
    const list = new DoNotCallList(path, log);
    if (!path) return list;
    await list.refresh();
    list.#timer = setInterval(() => void list.refresh(), everyMs);
    list.#timer.unref();
    return list;
  }

  get size(): number {
    return this.#numbers.size;
  }

  has(number: string): boolean {
    return this.#numbers.has(normal(number));
  }

  async refresh(): Promise<void> {
    if (!this.#path) return;
    try {
      const { mtimeMs } = await stat(this.#path);
      if (mtimeMs === this.#mtime) return;
      const text = await readFile(this.#path, "utf8");
      this.#mtime = mtimeMs;
      this.#numbers = new Set(
        text
          .split("\n")
          .map((l) => l.replace(/#.*/, ""))
          .map(normal)
          .filter(Boolean),
      );
      this.#log.info({ file: this.#path, numbers: this.#numbers.size }, "campaigns: do-not-call list read");
    } catch (err) {
      // Kept as it was: a list that cannot be read is never taken as empty.
      this.#log.error(
        { err, file: this.#path },
        "campaigns: cannot read the do-not-call list; keeping the last one read",
      );
      if (this.#mtime === -1) throw err;
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
