// One 20 ms wake-up for every channel's outgoing voice: each channel's sender registers while it
// has something to send and is stepped once per tick, so N channels cost one timer, not N (and
// not the library's per-player setImmediate chain). Ticks follow a drift-free schedule; after a
// stall the schedule restarts from now rather than bursting packets to catch up.
import { type Clock, systemClock, type TimerHandle } from "../../src/core/clock.ts";
import { recordTimerLateness } from "../../src/core/loop-lag.ts";

export const VOICE_TICK_MS = 20;
/** Later than this behind schedule, the schedule restarts from now (no burst of catch-up packets). */
const MAX_LAG_MS = 3 * VOICE_TICK_MS;

export interface VoiceTicker {
  /** Sends this tick's packet, if any; returns false once it has nothing more to do. */
  tick(): boolean;
}

export class VoiceClock {
  readonly #clock: Clock;
  readonly #tickers = new Set<VoiceTicker>();
  #timer: TimerHandle | undefined;
  #next = 0;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Steps `ticker` from the next tick on, until its tick() returns false. */
  add(ticker: VoiceTicker): void {
    if (this.#tickers.has(ticker)) return;
    this.#tickers.add(ticker);
    if (this.#timer !== undefined) return;
    this.#next = this.#clock.now();
    this.#schedule();
  }

  remove(ticker: VoiceTicker): void {
    this.#tickers.delete(ticker);
  }

  get active(): number {
    return this.#tickers.size;
  }

  #schedule(): void {
    this.#next += VOICE_TICK_MS;
    const now = this.#clock.now();
    if (now - this.#next > MAX_LAG_MS) this.#next = now;
    this.#timer = this.#clock.setTimeout(() => this.#step(), this.#next - now);
  }

  #step(): void {
    recordTimerLateness(this.#clock.now() - this.#next);
    // One ticker that throws (a session's bug) must not stop every other channel's voice: the
    // others are stepped, the schedule goes on, and the first error is thrown after that.
    let failed: { error: unknown } | undefined;
    for (const t of this.#tickers) {
      try {
        if (!t.tick()) this.#tickers.delete(t);
      } catch (error) {
        failed ??= { error };
      }
    }
    if (this.#tickers.size === 0) this.#timer = undefined;
    else this.#schedule();
    if (failed) throw failed.error;
  }
}

/** The process's clock for Discord voice: every channel of every guild shares its wake-up. */
export const sharedVoiceClock = new VoiceClock();
