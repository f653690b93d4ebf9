// When to try a failed delivery again: exponential backoff, doubling from `firstMs` up to `maxMs`,
// with "equal jitter" (a random point in the upper half of the step) so that reports which
// failed together — every report of a receiver outage — do not all come back at the same moment.

export interface Backoff {
  firstMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { firstMs: 1000, maxMs: 5 * 60_000 };

/** The wait after failed attempt number `attempt` (1 for the first). */
export function retryDelayMs(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  const step = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(step / 2 + (random() * step) / 2);
}
