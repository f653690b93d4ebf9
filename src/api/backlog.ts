// What the client lets queue toward a service that does not keep up (a starved or paused
// process, a slow network), and how it tells the application what it dropped. Without a bound,
// a bridge with hundreds of calls keeps every byte it could not send yet: gigabytes within
// minutes of a stalled service.

/** A queue toward the service that shed data instead of growing. */
export type BacklogQueue =
  /** E6 upload bodies: the oldest audio not yet taken by the connection was dropped. */
  | "asr_upload"
  /** E5 sessions: the socket's unsent bytes passed the bound and the session was failed. */
  | "tts_send";

export interface ShedEvent {
  queue: BacklogQueue;
  /** Bytes dropped (for asr_upload, of audio before Base64; for tts_send, unsent on the socket). */
  bytes: number;
}

export interface BacklogLimits {
  /** Largest body not yet taken by the connection, per E6 upload, bytes of Base64. */
  asrUploadBytes: number;
  /** Largest unsent data on an E5 socket before the session fails, bytes. */
  ttsSendBytes: number;
  /** Told of every drop (the bridge counts them in /metrics). */
  onShed: ((e: ShedEvent) => void) | undefined;
}

/**
 * Defaults: 512 KiB of Base64 is 12 s of 16 kHz speech, longer than a turn's utterance that a
 * live service would already have taken; 1 MiB of E5 client events is ~1,000 text deltas.
 */
export const DEFAULT_BACKLOG: BacklogLimits = {
  asrUploadBytes: 512 * 1024,
  ttsSendBytes: 1024 * 1024,
  onShed: undefined,
};

/**
 * A request body written as it is produced and read by the connection only as fast as the socket
 * takes it (a pull source: fetch asks for the next chunk once the last one is written out). What
 * waits in between is bounded: past `maxBytes`, the oldest droppable chunks go (the head, which
 * frames what follows, never does), and `onDrop` is told how many bytes.
 */
export class BoundedBody {
  readonly stream: ReadableStream<Uint8Array>;
  readonly #maxBytes: number;
  readonly #onDrop: (bytes: number) => void;
  readonly #chunks: Array<{ bytes: Uint8Array; droppable: boolean }> = [];
  #queued = 0;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  /** The connection asked for a chunk while none was queued. */
  #wanted = false;
  #closing = false;
  #done = false;

  constructor(maxBytes: number, onDrop: (bytes: number) => void) {
    this.#maxBytes = maxBytes;
    this.#onDrop = onDrop;
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.#controller = c;
        },
        pull: () => this.#pull(),
        cancel: () => this.#discard(),
      },
      { highWaterMark: 0 },
    );
  }

  /** Bytes written but not yet taken by the connection. */
  get queuedBytes(): number {
    return this.#queued;
  }

  /** Adds a chunk; a droppable one may be shed later if the connection falls behind. */
  write(bytes: Uint8Array, droppable = true): void {
    if (this.#closing || this.#done) return;
    if (this.#wanted) {
      this.#wanted = false;
      this.#controller.enqueue(bytes);
      return;
    }
    this.#chunks.push({ bytes, droppable });
    this.#queued += bytes.length;
    if (this.#queued > this.#maxBytes) this.#shed();
  }

  /** No more chunks: the body ends once the queued ones are taken. */
  close(): void {
    if (this.#closing || this.#done) return;
    this.#closing = true;
    if (this.#chunks.length === 0) this.#finish();
  }

  #pull(): void {
    const next = this.#chunks.shift();
    if (next) {
      this.#queued -= next.bytes.length;
      this.#controller.enqueue(next.bytes);
      if (this.#closing && this.#chunks.length === 0) this.#finish();
    } else if (this.#closing) this.#finish();
    else this.#wanted = true;
  }

  #shed(): void {
    let dropped = 0;
    for (let i = 0; i < this.#chunks.length && this.#queued > this.#maxBytes; ) {
      const c = this.#chunks[i]!;
      if (!c.droppable) {
        i++;
        continue;
      }
      this.#chunks.splice(i, 1);
      this.#queued -= c.bytes.length;
      dropped += c.bytes.length;
    }
    if (dropped > 0) this.#onDrop(dropped);
  }

  #finish(): void {
    if (this.#done) return;
    this.#done = true;
    this.#controller.close();
  }

  #discard(): void {
    this.#done = true;
    this.#chunks.length = 0;
    this.#queued = 0;
  }
}
