// A growing mono Int16 recording, appended to frame by frame.

export class Recording {
  #data: Int16Array;
  #length = 0;

  constructor(initialSamples = 8000 * 30) {
    this.#data = new Int16Array(initialSamples);
  }

  append(frame: Int16Array): void {
    if (this.#length + frame.length > this.#data.length) {
      const bigger = new Int16Array(Math.max(this.#data.length * 2, this.#length + frame.length));
      bigger.set(this.#data.subarray(0, this.#length));
      this.#data = bigger;
    }
    this.#data.set(frame, this.#length);
    this.#length += frame.length;
  }

  get length(): number {
    return this.#length;
  }

  /** A copy of what was recorded. */
  toArray(): Int16Array {
    return this.#data.slice(0, this.#length);
  }
}
