// The caller's utterance sent to recognition while it is spoken: from its start (pre-roll
// included) as soon as speech begins, then what the window gains, in pieces of a tenth of a
// second (fewer, larger writes; the recognizer decodes in quarter seconds anyway). At the end of
// speech only the last piece is left to send and decode.
import type { RecognizerStream } from "./services.ts";
import type { AudioWindow } from "./utterance.ts";

/** Audio gathered before a write, ms. */
const PIECE_MS = 100;

export class UtteranceUpload {
  /** Stream time the utterance starts at, ms. */
  readonly fromMs: number;
  readonly #stream: RecognizerStream;
  readonly #window: AudioWindow;
  #sentMs: number;
  #closed = false;
  #aborted = false;
  /** Each piece is read into this and written from it (the stream copies what it is given). */
  #piece = new Int16Array(0);

  constructor(stream: RecognizerStream, window: AudioWindow, fromMs: number) {
    this.#stream = stream;
    this.#window = window;
    this.fromMs = fromMs;
    this.#sentMs = fromMs;
    this.feed(0);
  }

  /** Sends what the window holds past what was sent, once a piece has gathered (or `minMs`). */
  feed(minMs = PIECE_MS): void {
    const now = this.#window.nowMs;
    if (this.#closed || now - this.#sentMs < minMs || now <= this.#sentMs) return;
    const need = this.#window.samplesBetween(this.#sentMs, now);
    if (this.#piece.length < need) this.#piece = new Int16Array(Math.max(need, 2 * this.#piece.length));
    const n = this.#window.readInto(this.#sentMs, now, this.#piece);
    this.#stream.write(this.#piece.subarray(0, n));
    this.#sentMs = now;
  }

  /** The utterance ended: sends the rest; resolves with the transcript. */
  end(): Promise<string> {
    this.feed(0);
    this.#closed = true;
    return this.#stream.end();
  }

  /** Drops it, also after end() (the transcript is no longer wanted). */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#closed = true;
    this.#stream.abort();
  }
}
