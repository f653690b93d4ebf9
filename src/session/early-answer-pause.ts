// The caller goes on right after the agent began to answer: their pause was not the end of the
// turn. The answer falls silent at once. If what they make ends within bargeInMinMs it was a
// click or a breath, and the answer goes on; else the answer is dropped and the same utterance
// goes on (its start is kept), so their words are recognized as one.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { AgentTurn } from "./agent-turn.ts";

/** The record's note when an early answer is dropped for the caller going on (the agent stopped for them). */
export const EARLY_ANSWER_DROPPED = "early answer dropped: the caller was still speaking";

export class EarlyAnswerPause<K> {
  readonly #clock: Clock;
  readonly #log: Logger;
  /** The reply being heard now: only that one goes on (as in onset-pause.ts). */
  readonly #current: () => AgentTurn | undefined;
  #now: { who: K; answer: AgentTurn; timer: TimerHandle } | undefined;

  constructor(clock: Clock, log: Logger, current: () => AgentTurn | undefined) {
    this.#clock = clock;
    this.#log = log;
    this.#current = current;
  }

  /**
   * `who` began to speak over the early `answer`: it pauses, and `dropped` runs (the answer
   * cancelled) once they have gone on for `afterMs` more.
   */
  begin(answer: AgentTurn, who: K, afterMs: number, dropped: () => void): void {
    answer.pause();
    const timer = this.#clock.setTimeout(() => {
      this.stop();
      this.#log.info("caller went on after a pause: dropping the early answer");
      answer.cancel();
      dropped();
    }, afterMs);
    this.#now = { who, answer, timer };
  }

  /** `who`'s speech ended, or they left: if it was theirs that paused the answer, it goes on. True if so. */
  ended(who: K): boolean {
    const now = this.#now;
    if (now?.who !== who) return false;
    this.stop();
    if (this.#current() === now.answer) now.answer.resume();
    return true;
  }

  /** Nothing is waited for any more (the call ended). */
  stop(): void {
    this.#clock.clearTimeout(this.#now?.timer);
    this.#now = undefined;
  }
}
