// A 16-bit PCM WAV file written as it grows, off the event loop, in order, without blocking:
// samples handed to append() go out in the next write (all that queued up
// during the previous one, in one write), each at its own offset in the file, and after every
// write the header is rewritten with the sizes of the data that is now on disk. So at any
// moment the file is a complete, playable WAV of everything written so far: a crash loses only
// what was still queued, never the file. (The header could instead say "size unknown"
// (0xFFFFFFFF) until the end, but not every player accepts that; rewriting 44 bytes per write
// costs one small positional write.) Nothing is fsync'd: a process crash loses nothing the OS
// has, and an fsync per call per second would cost the disk more than the recording is worth.
// The file is created as soon as the writer is, and never over another: if the name is taken
// (the same call reconnected, or recorded before a restart) it becomes `<name>-2.wav`, `-3`, …,
// each name tried with an exclusive create, so two writers racing for one name get two files.
import { type FileHandle, open } from "node:fs/promises";
import { join, parse } from "node:path";
import { wavHeader } from "../../codecs/wav.ts";

export interface WavFileOptions {
  sampleRate: number;
  channels: number;
  /**
   * Hears the first problem only: a failed open or write (the file then stops growing, its
   * header still describing what was written), or audio dropped because writes fell behind.
   */
  onError(err: Error): void;
  /** Most bytes waiting to be written; audio beyond it is dropped, leaving silence (default 4 MiB). */
  maxQueuedBytes?: number;
  /**
   * Write over whatever is at `path` (a device, say). Default false: an existing file is kept
   * and this one is created under the first free name of `<name>-2<ext>`, `<name>-3<ext>`, ….
   */
  overwrite?: boolean;
  /** Hears the path the file was created under, once it exists. */
  onCreated?(path: string): void;
}

interface Pending {
  /** Offset within the data chunk. */
  at: number;
  bytes: Uint8Array;
}

const HEADER_BYTES = 44;
/** The largest data chunk a RIFF header can describe. */
const MAX_DATA_BYTES = 0xffffffff - 36;

/** `path` with `-n` before its extension: `a/call.wav` → `a/call-2.wav`. */
function numberedPath(path: string, n: number): string {
  const { dir, name, ext } = parse(path);
  return join(dir, `${name}-${n}${ext}`);
}

export class WavFileWriter {
  readonly sampleRate: number;
  readonly channels: number;
  readonly #onError: (err: Error) => void;
  readonly #onCreated: ((path: string) => void) | undefined;
  readonly #maxQueued: number;
  readonly #overwrite: boolean;
  /** Settles (never rejects) once the file exists or could not be created. */
  readonly #created: Promise<void>;
  #path: string;
  #pending: Pending[] = [];
  #queuedBytes = 0;
  /** Data bytes handed to append() so far (the next append's offset). */
  #appended = 0;
  /** Data bytes known to be on disk: what the header says. */
  #written = 0;
  #handle: FileHandle | undefined;
  #drain: Promise<void> | undefined;
  #closed = false;
  #failed = false;
  #reported = false;
  #droppedBytes = 0;

  /** Starts creating the file (see `overwrite`); failures go to `onError`, never thrown. */
  constructor(path: string, opts: WavFileOptions) {
    this.#path = path;
    this.sampleRate = opts.sampleRate;
    this.channels = opts.channels;
    this.#onError = opts.onError;
    this.#onCreated = opts.onCreated;
    this.#maxQueued = opts.maxQueuedBytes ?? 4 * 1024 * 1024;
    this.#overwrite = opts.overwrite ?? false;
    // Validates rate and channels now rather than in the first write.
    wavHeader(opts.sampleRate, opts.channels, 16, 0);
    // Claimed now, not at the first write, so a call's files are numbered in the order the
    // calls started, and flushed() covers the creation.
    this.#created = this.#create();
    this.#drain = this.#run();
  }

  /** The file written: the path asked for until the file exists, then the name it was created under. */
  get path(): string {
    return this.#path;
  }

  /** True once an open or write failed: the file no longer grows. */
  get failed(): boolean {
    return this.#failed;
  }

  /** Data bytes on disk, as the header says. */
  get dataBytes(): number {
    return this.#written;
  }

  /** Audio dropped because writes fell behind or the file reached the WAV size limit, in bytes. */
  get droppedBytes(): number {
    return this.#droppedBytes;
  }

  /**
   * Queues interleaved samples to follow everything appended before (whole sample frames).
   * The array is kept until written: the caller must not reuse it.
   */
  append(samples: Int16Array): void {
    if (this.#closed) throw new Error(`WavFileWriter: ${this.path} is closed`);
    if (samples.length % this.channels !== 0) {
      throw new RangeError(
        `WavFileWriter: ${samples.length} samples is not whole ${this.channels}-channel frames`,
      );
    }
    if (this.#failed || samples.length === 0) return;
    const bytes = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
    const at = this.#appended;
    this.#appended += bytes.length;
    // The offset advances even for dropped audio, so what follows keeps its place in time.
    if (this.#queuedBytes + bytes.length > this.#maxQueued || this.#appended > MAX_DATA_BYTES) {
      this.#droppedBytes += bytes.length;
      this.#report(
        new Error(
          this.#appended > MAX_DATA_BYTES
            ? `recording ${this.path} reached the 4 GiB WAV limit; the rest is not recorded`
            : `recording ${this.path}: disk writes fell ${this.#queuedBytes} bytes behind; dropping audio`,
        ),
      );
      return;
    }
    this.#pending.push({ at, bytes });
    this.#queuedBytes += bytes.length;
    this.#drain ??= this.#run();
  }

  /** Writes what is queued, completes the header and closes the file. Nothing may be appended after. */
  close(): Promise<void> {
    this.#closed = true;
    this.#drain ??= this.#run();
    return this.#drain;
  }

  /** Resolves once everything appended so far is written (or has failed). */
  async flushed(): Promise<void> {
    while (this.#drain) await this.#drain;
  }

  async #run(): Promise<void> {
    try {
      await this.#created;
      while (this.#pending.length > 0 && !this.#failed && this.#handle) {
        const handle = this.#handle;
        const batch = this.#pending;
        this.#pending = [];
        try {
          for (const p of batch) {
            await handle.write(p.bytes, 0, p.bytes.length, HEADER_BYTES + p.at);
            this.#queuedBytes -= p.bytes.length;
            this.#written = Math.max(this.#written, p.at + p.bytes.length);
          }
          await this.#writeHeader(handle);
        } catch (err) {
          this.#fail(err as Error);
        }
      }
      if (this.#closed) await this.#finish();
    } finally {
      this.#drain = undefined;
    }
  }

  /**
   * Creates the file with a header for no data yet: exclusively ("wx") under the first free
   * name, or over what is there if `overwrite`. A call with no audio still leaves a valid file.
   */
  async #create(): Promise<void> {
    try {
      const wanted = this.#path;
      let handle: FileHandle | undefined;
      for (let n = 1; !handle; n++) {
        const path = n === 1 ? wanted : numberedPath(wanted, n);
        try {
          handle = await open(path, this.#overwrite ? "w" : "wx");
          this.#path = path;
        } catch (err) {
          // Taken (by a file, or by another writer a moment ago): try the next name.
          if ((err as NodeJS.ErrnoException).code !== "EEXIST" || this.#overwrite) throw err;
        }
      }
      this.#handle = handle;
      await this.#writeHeader(handle);
      this.#onCreated?.(this.#path);
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  async #writeHeader(handle: FileHandle): Promise<void> {
    const header = wavHeader(this.sampleRate, this.channels, 16, this.#written);
    await handle.write(header, 0, HEADER_BYTES, 0);
  }

  async #finish(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    if (!handle) return;
    try {
      await handle.close();
    } catch (err) {
      this.#report(err as Error);
    }
  }

  /** Stops writing for good; the header keeps describing the data written before. */
  #fail(err: Error): void {
    this.#failed = true;
    // Everything not yet on disk: the rest of the failed batch and what queued behind it.
    this.#droppedBytes += this.#queuedBytes;
    this.#pending = [];
    this.#queuedBytes = 0;
    this.#report(err);
  }

  #report(err: Error): void {
    if (this.#reported) return;
    this.#reported = true;
    this.#onError(err);
  }
}
