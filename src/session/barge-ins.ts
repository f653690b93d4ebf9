// Speakers talking over the agent. Each one pauses the agent after `bargeInMinMs` and
// interrupts it after `bargeInConfirmMs`; one who stops sooner was a backchannel or a cough.
// Kept per speaker, so an "mm-hm" from one member neither stops the agent nor cancels another
// member's real interruption; the agent resumes only when nobody is holding it.
import type { Clock, TimerHandle } from "./clock.ts";

interface Barge {
  startAt: number;
  pauseTimer: TimerHandle | undefined;
  confirmTimer: TimerHandle | undefined;
}

export interface BargeInHost {
  /** The agent should fall silent (audio dropped at the far side, resumable). */
  pause(): void;
  /** Talk-over long enough to be an interruption: `bargeInMs` from its start to the silence. */
  interrupt(bargeInMs: number, startAt: number, clearedAt: number): void;
}

export class BargeIns<K> {
  readonly #clock: Clock;
  readonly #host: BargeInHost;
  readonly #barges = new Map<K, Barge>();
  /** When the agent first fell silent for the barge-ins under way. */
  #clearedAt: number | undefined;

  constructor(clock: Clock, host: BargeInHost) {
    this.#clock = clock;
    this.#host = host;
  }

  get active(): boolean {
    return this.#barges.size > 0;
  }

  has(who: K): boolean {
    return this.#barges.has(who);
  }

  /** `who` began speaking over the agent at clock time `startAt`. */
  start(who: K, startAt: number, pauseAfterMs: number, interruptAfterMs: number): void {
    const since = this.#clock.now() - startAt;
    const barge: Barge = { startAt, pauseTimer: undefined, confirmTimer: undefined };
    barge.pauseTimer = this.#clock.setTimeout(() => {
      barge.pauseTimer = undefined;
      this.#clearedAt ??= this.#clock.now();
      this.#host.pause();
    }, pauseAfterMs - since);
    barge.confirmTimer = this.#clock.setTimeout(() => {
      barge.confirmTimer = undefined;
      this.#clearedAt ??= this.#clock.now();
      this.#host.interrupt(Math.round(this.#clearedAt - startAt), startAt, this.#clearedAt);
    }, interruptAfterMs - since);
    this.#barges.set(who, barge);
  }

  /**
   * `who` stopped speaking: true if it was short (not yet an interruption), and so a backchannel.
   * Either way their barge-in is over.
   */
  end(who: K): boolean {
    const barge = this.#barges.get(who);
    if (!barge) return false;
    const short = barge.confirmTimer !== undefined;
    this.#clock.clearTimeout(barge.pauseTimer);
    this.#clock.clearTimeout(barge.confirmTimer);
    this.#barges.delete(who);
    if (this.#barges.size === 0) this.#clearedAt = undefined;
    return short;
  }

  /** The agent's turn is over (interrupted or ended): every barge-in with it. */
  endAll(): void {
    for (const who of [...this.#barges.keys()]) this.end(who);
  }
}
