// The pace of a campaign: a token bucket of calls per minute, shared by every bridge working the
// campaign (its state is kept on the campaign's row and updated under the row's lock), holding at
// most two seconds' worth (at least one call) so that a late tick catches up without a burst.

export interface Bucket {
  /** Calls that may start now (fractional). */
  readonly tokens: number;
  /** When `tokens` was counted, epoch ms. */
  readonly at: number;
}

export function burstOf(perMinute: number): number {
  return Math.max(1, (perMinute / 60) * 2);
}

/** The bucket at `now`, refilled at `perMinute`. */
export function refill(b: Bucket, now: number, perMinute: number): Bucket {
  const elapsed = Math.max(0, now - b.at);
  return {
    tokens: Math.min(burstOf(perMinute), b.tokens + (elapsed / 60_000) * perMinute),
    at: Math.max(now, b.at),
  };
}

/** How many calls may start now, and the bucket after them. */
export function take(
  b: Bucket,
  now: number,
  perMinute: number,
  wanted: number,
): { n: number; bucket: Bucket; nextInMs: number } {
  const full = refill(b, now, perMinute);
  const n = Math.max(0, Math.min(Math.floor(full.tokens), wanted));
  const left = full.tokens - n;
  const nextInMs = left >= 1 ? 0 : Math.ceil(((1 - left) / perMinute) * 60_000);
  return { n, bucket: { tokens: left, at: full.at }, nextInMs };
}

/** A new campaign's bucket: one call may start at once. */
export function freshBucket(now: number): Bucket {
  return { tokens: 1, at: now };
}
