// The one clock every timer in session/ and bridges/ goes through, so turn-taking and
// pacing run deterministically on virtual time in tests and on the monotonic clock in calls.
import { performance } from "node:perf_hooks";

export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Monotonic milliseconds (not wall time). */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

interface SystemHandle extends TimerHandle {
  readonly timeout: NodeJS.Timeout;
}
let nextSystemId = 1;

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout(fn, ms) {
    const handle: SystemHandle = { id: nextSystemId++, timeout: setTimeout(fn, Math.max(0, ms)) };
    return handle;
  },
  clearTimeout(handle) {
    if (handle && "timeout" in handle) clearTimeout((handle as SystemHandle).timeout);
  },
};

interface Pending {
  id: number;
  at: number;
  fn: () => void;
}

/** Virtual time: nothing happens until the test advances it. Timers fire in time order. */
export class VirtualClock implements Clock {
  #now: number;
  #nextId = 1;
  #pending: Pending[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: this.#nextId++, at: this.#now + Math.max(0, ms), fn };
    this.#pending.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (!handle) return;
    this.#pending = this.#pending.filter((p) => p.id !== handle.id);
  }

  /** Moves time forward by `ms`, firing due timers in order (timers they set fire too if due). */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      const next = this.#earliest();
      if (!next || next.at > end) break;
      this.#pending = this.#pending.filter((p) => p !== next);
      this.#now = next.at;
      next.fn();
    }
    this.#now = end;
  }

  /** Like advance, but lets promise callbacks run between timers (for async code under test). */
  async advanceAsync(ms: number, stepMs = 1): Promise<void> {
    const end = this.#now + ms;
    while (this.#now < end) {
      this.advance(Math.min(stepMs, end - this.#now));
      await flushMicrotasks();
    }
  }

  get pendingTimers(): number {
    return this.#pending.length;
  }

  #earliest(): Pending | undefined {
    let best: Pending | undefined;
    for (const p of this.#pending)
      if (!best || p.at < best.at || (p.at === best.at && p.id < best.id)) best = p;
    return best;
  }
}

/** Lets queued promise continuations run (several rounds, for chained awaits). */
export async function flushMicrotasks(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
