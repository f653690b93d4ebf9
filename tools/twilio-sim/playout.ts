// The caller's loudspeaker, as Twilio's playout of a bidirectional stream behaves: audio
// plays in arrival order in real time; a mark is echoed once all audio sent before it has
// played (at once if nothing is queued); `clear` drops unplayed audio and echoes every
// pending mark immediately.

type Item = Int16Array | string;

export class PlayoutLine {
  #items: Item[] = [];
  #head = 0;
  #offset = 0;
  #buffered = 0;

  /** Queues received agent audio. */
  audio(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.#items.push(pcm);
    this.#buffered += pcm.length;
  }

  /** Queues a mark; returns the marks to echo now (this one, if no audio is ahead of it). */
  mark(name: string): string[] {
    this.#items.push(name);
    return this.#leadingMarks();
  }

  /**
   * Plays up to `out.length` samples into `out` (the rest is silence) and returns how many
   * were audio, plus the marks whose audio has now all played.
   */
  play(out: Int16Array): { samples: number; marks: string[] } {
    const marks = this.#leadingMarks();
    let filled = 0;
    while (filled < out.length && this.#head < this.#items.length) {
      const item = this.#items[this.#head]!;
      if (typeof item === "string") break;
      const take = Math.min(out.length - filled, item.length - this.#offset);
      out.set(item.subarray(this.#offset, this.#offset + take), filled);
      filled += take;
      this.#offset += take;
      if (this.#offset === item.length) {
        this.#head++;
        this.#offset = 0;
      }
    }
    out.fill(0, filled);
    this.#buffered -= filled;
    marks.push(...this.#leadingMarks());
    this.#compact();
    return { samples: filled, marks };
  }

  /** Drops unplayed audio; returns the pending marks, to be echoed at once. */
  clear(): string[] {
    const marks = this.#items.slice(this.#head).filter((i): i is string => typeof i === "string");
    this.#items = [];
    this.#head = 0;
    this.#offset = 0;
    this.#buffered = 0;
    return marks;
  }

  /** Samples of audio waiting to be played. */
  get buffered(): number {
    return this.#buffered;
  }

  #leadingMarks(): string[] {
    const out: string[] = [];
    while (this.#head < this.#items.length && typeof this.#items[this.#head] === "string") {
      out.push(this.#items[this.#head++] as string);
    }
    return out;
  }

  #compact(): void {
    if (this.#head === this.#items.length) {
      this.#items.length = 0;
      this.#head = 0;
    } else if (this.#head > 256) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
