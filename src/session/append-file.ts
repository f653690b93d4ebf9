// Appends text to one file in order without blocking the event loop: the file is opened once,
// and what is added while a write is in flight goes out in the next write, all of it at once.
// A synchronous append per line would stall every call's audio for a disk write (and the
// garbage collector for longer, holding the loop); here a line reaches the OS within one write
// of being added, so a crash loses at most the lines of the last few milliseconds.
import { type FileHandle, open } from "node:fs/promises";

export class AppendFile {
  readonly path: string;
  readonly #onError: (err: Error) => void;
  #lines: string[] = [];
  #handle: FileHandle | undefined;
  /** The running drain, while one runs. */
  #drain: Promise<void> | undefined;
  /** close() was called: the handle is closed once the lines are written. */
  #closed = false;

  /** `onError` hears each failed open, write or close; lines of a failed write are dropped. */
  constructor(path: string, onError: (err: Error) => void) {
    this.path = path;
    this.#onError = onError;
  }

  /** Queues `text` (appended after everything added before it) and starts writing if idle. */
  add(text: string): void {
    if (this.#closed) throw new Error(`AppendFile: ${this.path} is closed`);
    this.#lines.push(text);
    this.#drain ??= this.#run();
  }

  /** Closes the file once everything added so far is written; nothing may be added after. */
  close(): Promise<void> {
    this.#closed = true;
    this.#drain ??= this.#run();
    return this.#drain;
  }

  /** Resolves once everything added so far is written (or has failed). */
  async flushed(): Promise<void> {
    while (this.#drain) await this.#drain;
  }

  async #run(): Promise<void> {
    try {
      while (this.#lines.length > 0) {
        const text = this.#lines.length === 1 ? this.#lines[0]! : this.#lines.join("");
        this.#lines = [];
        try {
          this.#handle ??= await open(this.path, "a");
          await this.#handle.appendFile(text);
        } catch (err) {
          this.#onError(err as Error);
        }
      }
      if (this.#closed && this.#handle) {
        const handle = this.#handle;
        this.#handle = undefined;
        try {
          await handle.close();
        } catch (err) {
          this.#onError(err as Error);
        }
      }
    } finally {
      this.#drain = undefined;
    }
  }
}
