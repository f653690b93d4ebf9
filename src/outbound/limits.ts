// The limits on placing calls: how many outbound calls may be in progress at once, and how many
// may start per second (a token bucket holding one second's worth, at least one call). A refusal
// says when to try again (the 429's Retry-After).

export type LimitVerdict = { ok: true } | { ok: false; why: string; retryAfterS: number };

export class DialLimits {
  readonly #max: number;
  readonly #rate: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;
  #live = 0;

  constructor(maxConcurrent: number, callsPerSecond: number, now: () => number = () => performance.now()) {
    this.#max = maxConcurrent;
    this.#rate = callsPerSecond;
    this.#burst = Math.max(1, callsPerSecond);
    this.#now = now;
    this.#tokens = this.#burst;
    this.#at = now();
  }

  get live(): number {
    return this.#live;
  }

  /** Takes a place for one call, or says why not and when to try again. */
  take(): LimitVerdict {
    if (this.#live >= this.#max)
      return {
        ok: false,
        why: `${this.#live} outbound calls in progress, the limit is ${this.#max} (outbound.maxConcurrent)`,
        retryAfterS: 5,
      };
    const now = this.#now();
    this.#tokens = Math.min(this.#burst, this.#tokens + ((now - this.#at) / 1000) * this.#rate);
    this.#at = now;
    if (this.#tokens < 1)
      return {
        ok: false,
        why: `more than ${this.#rate} calls per second (outbound.callsPerSecond)`,
        retryAfterS: Math.max(1, Math.ceil((1 - this.#tokens) / this.#rate)),
      };
    this.#tokens -= 1;
    this.#live++;
    return { ok: true };
  }

  /** A call placed earlier has ended (answered or not). */
  release(): void {
    if (this.#live > 0) this.#live--;
  }
}
