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
  #transcript: Promise<string> | undefined;
  readonly #now: (() => number) | undefined;
  /** Clock time of end(): from then on the transcript is the service's to give. */
  endedAt: number | undefined;
  /** Each piece is read into this and written from it (the stream copies what it is given). */
  #piece = new Int16Array(0);
  /** Audio is sent only up to here (stream time, ms): where the speaker's voice ended. */
  #capMs = Number.POSITIVE_INFINITY;
  /** Audio is sent only once this old (ms): what may yet turn out not to be the speaker's. */
  holdBackMs = 0;

  /** `now`: the session's clock, to time the end (endedAt). */
  constructor(stream: RecognizerStream, window: AudioWindow, fromMs: number, now?: () => number) {
    this.#now = now;
    this.#stream = stream;
    this.#window = window;
    this.fromMs = fromMs;
    this.#sentMs = fromMs;
    this.feed(0);
  }

  /** Sends what the window holds past what was sent, once a piece has gathered (or `minMs`). */
  feed(minMs = PIECE_MS): void {
    const now = Math.min(this.#capMs, this.#window.nowMs - (minMs === 0 ? 0 : this.holdBackMs));
    if (this.#closed || now - this.#sentMs < minMs || now <= this.#sentMs) return;
    const need = this.#window.samplesBetween(this.#sentMs, now);
    if (this.#piece.length < need) this.#piece = new Int16Array(Math.max(need, 2 * this.#piece.length));
    const n = this.#window.readInto(this.#sentMs, now, this.#piece);
    this.#stream.write(this.#piece.subarray(0, n));
    this.#sentMs = now;
  }

  /**
   * Nothing past stream time `atMs` is the speaker's (the room talked on after their voice): it
   * is not sent, however late the upload ends.
   */
  capAt(atMs: number): void {
    this.#capMs = Math.max(this.#sentMs, atMs);
  }

  /** end() was called: the upload is complete and its transcript on its way. */
  get ended(): boolean {
    return this.#transcript !== undefined;
  }

  /**
   * The utterance ended: sends the rest; resolves with the transcript. Ended early (at a pause that
   * may yet be the end of speech), it is asked again at the end proper: the same transcript.
   */
  end(): Promise<string> {
    if (this.#transcript) return this.#transcript;
    this.feed(0);
    this.#closed = true;
    this.endedAt = this.#now?.();
    const transcript = this.#stream.end();
    // Ended early and then dropped, nobody waits for it: its failure is not an unhandled one.
    transcript.catch(() => {});
    this.#transcript = transcript;
    return transcript;
  }

  /** Drops it, also after end() (the transcript is no longer wanted). */
  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#closed = true;
    this.#stream.abort();
  }
}
