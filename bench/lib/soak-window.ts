// Per-window figures of `npm run bench -- soak`: agent frame lateness as a fixed histogram (so a
// run of an hour keeps no per-frame array, and load generators' windows merge exactly), the 20 ms
// holes in the agent's audio, and the load generator's own loop delay. A load generator writes one
// JSON line per window (SoakWindowReport); the parent merges them.

/** Lateness bins: 0.1 ms each up to 2 s; the last bin holds everything later. */
const BIN_MS = 0.1;
const BINS = 20_001;

export class LatenessHistogram {
  readonly counts = new Uint32Array(BINS);
  total = 0;
  max = 0;

  add(ms: number): void {
    const bin = Math.min(BINS - 1, Math.max(0, Math.floor(ms / BIN_MS)));
    this.counts[bin]!++;
    this.total++;
    if (ms > this.max) this.max = ms;
  }

  /** Sparse [bin, count] pairs, for a JSON line. */
  toSparse(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < BINS; i++) if (this.counts[i]) out.push([i, this.counts[i]!]);
    return out;
  }

  merge(sparse: readonly [number, number][], max: number): void {
    for (const [bin, n] of sparse) {
      this.counts[bin]! += n;
      this.total += n;
    }
    if (max > this.max) this.max = max;
  }

  /** The p-th percentile, ms (the upper edge of its bin); NaN when empty. */
  percentile(p: number): number {
    if (this.total === 0) return Number.NaN;
    const rank = Math.max(1, Math.ceil((p / 100) * this.total));
    let seen = 0;
    for (let i = 0; i < BINS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return (i + 1) * BIN_MS;
    }
    return this.max;
  }

  reset(): void {
    this.counts.fill(0);
    this.total = 0;
    this.max = 0;
  }
}

export interface SoakWindowReport {
  window: number;
  frames: number;
  gapFrames: number;
  lateness: [number, number][];
  latenessMax: number;
  /**
   * The same frames' lateness by the time the load generator read them (its own loop's delay
   * included); `lateness` is from the kernel's receive stamps. Absent when there are no stamps
   * (Twilio without the ws-stamps addon), where `lateness` is the read time already.
   */
  readLateness?: [number, number][];
  readLatenessMax?: number;
  /** Twilio with stamps: the gap frames the read times would count (`gapFrames` is by the stamps). */
  readGapFrames?: number;
  loopDelayMsMax: number;
  loopDelayMsP99: number;
  /** Calls of this load generator that failed or ended early, so far. */
  callErrors: number;
}

/** Which window an epoch time falls in (-1 before the first, windows.length after the last). */
export function windowOf(windows: readonly [number, number][], at: number): number {
  if (windows.length === 0 || at < windows[0]![0]) return -1;
  for (let i = 0; i < windows.length; i++) if (at < windows[i]![1]) return i;
  return windows.length;
}
