// Work the embedded engines refuse rather than queue without end. When the machine is starved
// (or the service was paused), requests keep arriving while none finish; a job that waited longer
// than its caller would wait is of no use to anyone, and every waiting job holds its audio. So a
// job waits at most a deadline and the queue holds at most a number of jobs; past either, the job
// is refused with EngineBusyError (503 overloaded_error before a response starts, an in-band error
// event after), which the bridge handles as a failed step (a retry, then an apology).

import { ApiError } from "../errors.ts";

/** An engine had no room for the job in time: 503 overloaded_error, code engine_busy. */
export class EngineBusyError extends ApiError {
  override name = "EngineBusyError";
  readonly engine: "asr" | "tts";
  constructor(engine: "asr" | "tts", message: string) {
    super(503, message, { code: "engine_busy" });
    this.engine = engine;
  }
}

/** Jobs refused by the embedded engines since the process started, by engine. */
const refused = { asr: 0, tts: 0 };

export function engineRefusals(): Readonly<{ asr: number; tts: number }> {
  return refused;
}

export function refuse(engine: "asr" | "tts", message: string): EngineBusyError {
  refused[engine]++;
  return new EngineBusyError(engine, message);
}

export interface WaitBound {
  /** Longest a job waits for room, ms. */
  maxWaitMs: number;
  /** Most jobs waiting at once. */
  maxWaiting: number;
}

interface Waiter<T> {
  resolve: (v: T) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Jobs waiting for a resource, first come first served, under a WaitBound. */
export class BoundedWaitQueue<T> {
  readonly #engine: "asr" | "tts";
  readonly #bound: WaitBound;
  readonly #waiters: Waiter<T>[] = [];

  constructor(engine: "asr" | "tts", bound: WaitBound) {
    this.#engine = engine;
    this.#bound = bound;
  }

  get length(): number {
    return this.#waiters.length;
  }

  /** Waits for a give(); rejects with EngineBusyError when full or past the deadline. */
  wait(): Promise<T> {
    const { maxWaiting, maxWaitMs } = this.#bound;
    if (this.#waiters.length >= maxWaiting)
      return Promise.reject(
        refuse(this.#engine, `${this.#engine} engine busy: ${maxWaiting} jobs already waiting`),
      );
    return new Promise<T>((resolve, reject) => {
      const w: Waiter<T> = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const i = this.#waiters.indexOf(w);
          if (i >= 0) this.#waiters.splice(i, 1);
          reject(refuse(this.#engine, `${this.#engine} engine busy: no room within ${maxWaitMs} ms`));
        }, maxWaitMs),
      };
      w.timer.unref?.();
      this.#waiters.push(w);
    });
  }

  /** Hands `v` to the oldest waiter; false when nobody waits. */
  give(v: T): boolean {
    const w = this.#waiters.shift();
    if (!w) return false;
    clearTimeout(w.timer);
    w.resolve(v);
    return true;
  }

  /** Rejects every waiter (the engine closed). */
  rejectAll(err: Error): void {
    for (const w of this.#waiters.splice(0)) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}
