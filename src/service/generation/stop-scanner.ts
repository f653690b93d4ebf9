// Finds stop sequences in streamed text. Text that might be the start of a stop sequence is held
// back until the next delta shows whether it is, so a stop sequence never reaches the client even
// when it is split across deltas.

export interface ScanResult {
  /** Text safe to emit now. */
  emit: string;
  /** The stop sequence found; generation ends after `emit`. */
  matched?: string;
}

export class StopScanner {
  private readonly stops: readonly string[];
  private held = "";

  constructor(stops: readonly string[]) {
    this.stops = stops.filter((s) => s.length > 0);
  }

  push(text: string): ScanResult {
    if (this.stops.length === 0) return { emit: text };
    const buf = this.held + text;
    let at = -1;
    let matched: string | undefined;
    for (const s of this.stops) {
      const i = buf.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) {
        at = i;
        matched = s;
      }
    }
    if (matched !== undefined) {
      this.held = "";
      return { emit: buf.slice(0, at), matched };
    }
    const keep = this.partialSuffix(buf);
    this.held = buf.slice(buf.length - keep);
    return { emit: buf.slice(0, buf.length - keep) };
  }

  /** The held-back text, at the end of the block. */
  flush(): string {
    const out = this.held;
    this.held = "";
    return out;
  }

  /** Length of the longest suffix of `buf` that is a proper prefix of some stop sequence. */
  private partialSuffix(buf: string): number {
    let best = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, buf.length); k > best; k--) {
        if (buf.endsWith(s.slice(0, k))) {
          best = k;
          break;
        }
      }
    }
    return best;
  }
}
