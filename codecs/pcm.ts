// Small helpers on 16-bit linear PCM: format conversion, channel mixing, gain, level, and
// cutting a stream of arbitrary chunks into fixed-size frames.
//
// Every function taking `out` writes into it (it must be at least as long as the result)
// and returns a view of exactly the result's length, so callers can reuse one buffer per call.

function target<T extends Int16Array | Float32Array>(
  out: T | undefined,
  length: number,
  make: (n: number) => T,
  what: string,
): T {
  if (out === undefined) return make(length);
  if (out.length < length)
    throw new RangeError(`${what}: output buffer holds ${out.length}, ${length} needed`);
  return (out.length === length ? out : out.subarray(0, length)) as T;
}

/** Int16 → float in [-1, 1): divides by 32768, so -32768 maps to exactly -1. */
export function int16ToFloat32(pcm: Int16Array, out?: Float32Array): Float32Array {
  const dst = target(out, pcm.length, (n) => new Float32Array(n), "int16ToFloat32");
  for (let i = 0; i < pcm.length; i++) dst[i] = pcm[i]! / 32768;
  return dst;
}

function toInt16(x: number): number {
  // Math.round rounds half up; NaN falls through both comparisons and `| 0` makes it 0.
  const v = Math.round(x);
  return v > 32767 ? 32767 : v < -32768 ? -32768 : v | 0;
}

/** Float (nominally [-1, 1]) → Int16: scales by 32768, rounds to nearest, clamps out-of-range values. */
export function float32ToInt16(f: Float32Array, out?: Int16Array): Int16Array {
  const dst = target(out, f.length, (n) => new Int16Array(n), "float32ToInt16");
  for (let i = 0; i < f.length; i++) dst[i] = toInt16(f[i]! * 32768);
  return dst;
}

/** The parts one after another, in a new array. */
export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Interleaved stereo (L, R, L, R, …) → mono, each sample the mean of L and R rounded half up. */
export function stereoToMono(interleaved: Int16Array, out?: Int16Array): Int16Array {
  if (interleaved.length % 2 !== 0) {
    throw new RangeError(`stereoToMono: ${interleaved.length} samples is not a whole number of L/R pairs`);
  }
  const n = interleaved.length >> 1;
  const dst = target(out, n, (k) => new Int16Array(k), "stereoToMono");
  for (let i = 0; i < n; i++) dst[i] = (interleaved[2 * i]! + interleaved[2 * i + 1]! + 1) >> 1;
  return dst;
}

/** Multiplies by a linear gain, rounds to nearest and clamps to the Int16 range. */
export function applyGain(pcm: Int16Array, gain: number, out?: Int16Array): Int16Array {
  const dst = target(out, pcm.length, (n) => new Int16Array(n), "applyGain");
  for (let i = 0; i < pcm.length; i++) dst[i] = toInt16(pcm[i]! * gain);
  return dst;
}

/** Converts a level in dB to a linear gain factor. */
export function dbToGain(db: number): number {
  return 10 ** (db / 20);
}

/**
 * RMS level in dB relative to full scale (32768): -Infinity for digital silence or an empty
 * buffer; a full-scale sine reads ≈ -3.01 dBFS, a full-scale square 0 dBFS.
 */
export function levelDbfs(pcm: Int16Array): number {
  let sum = 0;
  for (let i = 0; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  if (sum === 0) return Number.NEGATIVE_INFINITY;
  return 10 * Math.log10(sum / pcm.length / (32768 * 32768));
}

/** Samples in one frame of `ms` milliseconds at `rate` Hz (20 ms at 8 kHz → 160); must be whole. */
export function frameSamples(rate: number, ms = 20): number {
  const n = (rate * ms) / 1000;
  if (!Number.isInteger(n) || n <= 0) {
    throw new RangeError(`frameSamples: ${ms} ms at ${rate} Hz is not a whole positive number of samples`);
  }
  return n;
}

/**
 * Cuts a stream of arbitrarily sized chunks into frames of exactly `frameSamples` samples, two ways:
 * push() returns fresh frames the caller may keep; cut() hands each frame to a callback without
 * allocating (the hot paths: a transport's inbound audio, 50 frames a second per call). The
 * remainder waits for the next chunk either way.
 */
export class Framer {
  readonly frameSamples: number;
  #partial: Int16Array;
  #fill = 0;

  constructor(frameSamples: number) {
    if (!Number.isInteger(frameSamples) || frameSamples <= 0) {
      throw new RangeError(`Framer: frame size must be a positive integer, got ${frameSamples}`);
    }
    this.frameSamples = frameSamples;
    this.#partial = new Int16Array(frameSamples);
  }

  /** Samples held back, waiting to complete a frame. */
  get pending(): number {
    return this.#fill;
  }

  /** Adds a chunk and returns every frame it completes (possibly none). */
  push(chunk: Int16Array): Int16Array[] {
    const size = this.frameSamples;
    const frames: Int16Array[] = [];
    let pos = 0;
    if (this.#fill > 0) {
      const take = Math.min(size - this.#fill, chunk.length);
      this.#partial.set(chunk.subarray(0, take), this.#fill);
      this.#fill += take;
      pos = take;
      if (this.#fill < size) return frames;
      frames.push(this.#partial);
      this.#partial = new Int16Array(size);
      this.#fill = 0;
    }
    while (chunk.length - pos >= size) {
      frames.push(chunk.slice(pos, pos + size));
      pos += size;
    }
    if (pos < chunk.length) {
      this.#partial.set(chunk.subarray(pos), 0);
      this.#fill = chunk.length - pos;
    }
    return frames;
  }

  /**
   * Adds a chunk and calls `onFrame` with each frame it completes, allocating nothing: a chunk
   * that is exactly one frame, with nothing held back, is passed on as it is (no copy); any other
   * frame is gathered in the framer's own buffer, reused for the next one. Either way the frame is
   * the caller's only during the call: `onFrame` uses it (or copies it) before returning.
   */
  cut(chunk: Int16Array, onFrame: (frame: Int16Array) => void): void {
    const size = this.frameSamples;
    if (this.#fill === 0 && chunk.length === size) {
      onFrame(chunk);
      return;
    }
    const frame = this.#partial;
    let pos = 0;
    while (pos < chunk.length) {
      const fill = this.#fill;
      const take = Math.min(size - fill, chunk.length - pos);
      // Sample by sample: set(subarray()) would make a view object per copy.
      for (let i = 0; i < take; i++) frame[fill + i] = chunk[pos + i]!;
      this.#fill = fill + take;
      pos += take;
      if (this.#fill === size) {
        this.#fill = 0;
        onFrame(frame);
      }
    }
  }

  /** Drops the held-back samples (the stream ended or restarts). */
  reset(): void {
    this.#fill = 0;
  }

  /** The held-back samples as one last frame padded with silence, or null if none are held. */
  flush(): Int16Array | null {
    if (this.#fill === 0) return null;
    const last = this.#partial;
    // cut() reuses the buffer, so what lies past the held samples is an older frame's.
    last.fill(0, this.#fill);
    this.#partial = new Int16Array(this.frameSamples);
    this.#fill = 0;
    return last;
  }
}
