// Delivery attempt outcomes as a reporter (or a bridge) reports them, awaited one by one.
import type { AttemptResult } from "../../../src/records/reports/reporter.ts";

export class Attempts {
  readonly #seen: AttemptResult[] = [];
  readonly #waiters: ((r: AttemptResult) => void)[] = [];
  /** Pass as `onAttempt` / `onReportAttempt`. */
  readonly push = (r: AttemptResult): void => {
    const w = this.#waiters.shift();
    if (w) w(r);
    else this.#seen.push(r);
  };
  next(): Promise<AttemptResult> {
    const r = this.#seen.shift();
    return r ? Promise.resolve(r) : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
