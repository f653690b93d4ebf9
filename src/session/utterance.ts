// A rolling window of the caller's audio (16 kHz), addressed by stream time, so an
// utterance can be cut out with pre-roll from before the VAD noticed speech.

export class AudioWindow {
  readonly #rate: number;
  readonly #buf: Int16Array;
  /** Total samples ever written; the buffer holds the last `#buf.length` of them. */
  #written = 0;

  constructor(sampleRate: number, seconds: number) {
    this.#rate = sampleRate;
    this.#buf = new Int16Array(Math.ceil(sampleRate * seconds));
  }

  /** Stream time of the end of what was written, ms. */
  get nowMs(): number {
    return (this.#written * 1000) / this.#rate;
  }

  write(pcm: Int16Array): void {
    const cap = this.#buf.length;
    const buf = this.#buf;
    this.#written += pcm.length;
    // Only the last `cap` samples can stay; they land where their stream position says.
    const skip = Math.max(0, pcm.length - cap);
    const n = pcm.length - skip;
    const at = (this.#written - n) % cap;
    // The whole frame at once when it does not wrap (every 20 ms frame but one per window
    // turn): set() of the frame itself, and no view objects per frame either way.
    if (skip === 0 && at + n <= cap) {
      buf.set(pcm, at);
      return;
    }
    for (let i = 0; i < n; i++) buf[(at + i) % cap] = pcm[skip + i]!;
  }

  /** A copy of the audio between two stream times, clipped to what the window still holds. */
  slice(fromMs: number, toMs: number = this.nowMs): Int16Array {
    const out = new Int16Array(this.samplesBetween(fromMs, toMs));
    this.readInto(fromMs, toMs, out);
    return out;
  }

  /** Samples slice(fromMs, toMs) holds. */
  samplesBetween(fromMs: number, toMs: number = this.nowMs): number {
    return Math.max(0, this.#to(toMs) - this.#from(fromMs));
  }

  /**
   * The samples slice(fromMs, toMs) holds, written at the start of `out` (at least
   * samplesBetween() long) instead of a new array; returns how many.
   */
  readInto(fromMs: number, toMs: number, out: Int16Array): number {
    const from = this.#from(fromMs);
    const n = Math.max(0, this.#to(toMs) - from);
    if (out.length < n) throw new RangeError(`AudioWindow.readInto: ${n} samples, room for ${out.length}`);
    const cap = this.#buf.length;
    for (let i = 0; i < n; i++) out[i] = this.#buf[(from + i) % cap]!;
    return n;
  }

  #from(fromMs: number): number {
    const oldest = Math.max(0, this.#written - this.#buf.length);
    return Math.max(oldest, Math.floor((fromMs * this.#rate) / 1000));
  }

  #to(toMs: number): number {
    return Math.min(this.#written, Math.ceil((toMs * this.#rate) / 1000));
  }
}
