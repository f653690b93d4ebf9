// While an early answer has just begun (the caller's pause may be mid-sentence), a possible onset
// pauses it at once: speech-start comes 100–150 ms after the onset, and until then the caller who
// goes on would hear the agent over them. If the onset dies away without becoming speech (a
// click, a breath), the answer goes on from where it stopped.
import type { Logger } from "../core/log.ts";
import type { AgentTurn } from "./agent-turn.ts";
import type { SpeakerListener } from "./speaker-listener.ts";

export interface OnsetPauseHost {
  /** The early answer `l` would talk over if it made a sound now, if any. */
  earlyAnswer(l: SpeakerListener): AgentTurn | undefined;
  /** The reply being heard now. */
  current(): AgentTurn | undefined;
}

export class OnsetPause {
  readonly #host: OnsetPauseHost;
  readonly #log: Logger;
  #paused: { turn: AgentTurn; by: SpeakerListener } | undefined;

  constructor(host: OnsetPauseHost, log: Logger) {
    this.#host = host;
    this.#log = log;
  }

  /**
   * Each of `l`'s frames that the detector does not yet call speech. The answer goes on once the
   * onset has been gone ONSET_GONE_MS (speaker-listener.ts), not at its first soft frame.
   */
  watch(l: SpeakerListener): void {
    const paused = this.#paused;
    if (!paused) {
      if (!l.onsetPending()) return;
      const answer = this.#host.earlyAnswer(l);
      if (!answer) return;
      answer.pause();
      this.#paused = { turn: answer, by: l };
      this.#log.debug("possible onset during the early answer: paused");
    } else if (paused.by === l && !l.onsetLately()) {
      this.release(l);
      this.#log.debug("the onset died away: early answer resumed");
    }
  }

  /** `l`'s onset became speech: the turn-taking rules take the paused answer over. */
  forget(l: SpeakerListener): void {
    if (this.#paused?.by === l) this.#paused = undefined;
  }

  /** The answer paused for `l` goes on (the onset died away, or `l` left the call). */
  release(l: SpeakerListener): void {
    const paused = this.#paused;
    if (paused?.by !== l) return;
    this.#paused = undefined;
    if (this.#host.current() === paused.turn) paused.turn.resume();
  }
}
