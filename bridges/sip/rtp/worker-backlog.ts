// How far the bridge's thread is behind the RTP worker's batches, shared by both threads without
// a message: the worker counts what it posts, the bridge what it has taken. A bridge loop that
// stalls (a starved machine: seconds, once minutes) would otherwise find every caller frame of
// the stall queued on the channel, 3.2 MB a second at 200 calls. Past MAX_BATCHES_BEHIND the
// worker drops the caller frames of the moment and counts them (events and playout positions
// still go: they are small and a call needs them); once the bridge catches up, frames flow again.
import { FLUSH_MS } from "./worker-protocol.ts";

/** Batches the bridge may be behind before caller frames are dropped: half a second of audio. */
export const MAX_BATCHES_BEHIND = Math.round(500 / FLUSH_MS);

const POSTED = 0;
const TAKEN = 1;
const DROPPED_FRAMES = 2;
const DROPPED_SAMPLES = 3;

export class WorkerBacklog {
  /** Passed to the worker in its workerData. */
  readonly shared: SharedArrayBuffer;
  readonly #counts: BigInt64Array;

  constructor(shared = new SharedArrayBuffer(4 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.shared = shared;
    this.#counts = new BigInt64Array(shared);
  }

  /** (Worker) a batch was posted. */
  posted(): void {
    Atomics.add(this.#counts, POSTED, 1n);
  }

  /** (Bridge) a batch was taken. */
  taken(): void {
    Atomics.add(this.#counts, TAKEN, 1n);
  }

  /** Batches posted and not yet taken. */
  get behind(): number {
    return Number(Atomics.load(this.#counts, POSTED) - Atomics.load(this.#counts, TAKEN));
  }

  /** (Worker) whether a caller frame goes now, counting it if it does not. */
  admit(samples: number): boolean {
    if (this.behind <= MAX_BATCHES_BEHIND) return true;
    Atomics.add(this.#counts, DROPPED_FRAMES, 1n);
    Atomics.add(this.#counts, DROPPED_SAMPLES, BigInt(samples));
    return false;
  }

  /** Caller frames dropped so far, and their 16-bit samples. */
  get dropped(): { frames: number; samples: number } {
    return {
      frames: Number(Atomics.load(this.#counts, DROPPED_FRAMES)),
      samples: Number(Atomics.load(this.#counts, DROPPED_SAMPLES)),
    };
  }
}
