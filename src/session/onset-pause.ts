// While an early answer has just begun (the caller's pause may be mid-sentence), a possible onset
// pauses it at once: speech-start comes 100–150 ms after the onset, and until then the caller who
// goes on would hear the agent over them. If the onset dies away without becoming speech (a
// click, a breath), the answer goes on from where it stopped.
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { AgentTurn } from "./agent-turn.ts";
import type { SpeakerListener } from "./speaker-listener.ts";

/**
 * How long an onset must be gone before the answer goes on. In a loud room a frame is judged by
 * its own level, and a syllable's soft frame (a fricative, a stop's closure) fell under the bar
 * for one or two frames: the answer went on for 20–40 ms, each a chirp of the agent over a caller
 * going on (a sixth to a third of the onsets that died away in a conversation or a shop's
 * announcements at 10 dB came back within 40 ms, one as speech 4 ms later).
 */
export const ONSET_GONE_MS = 40;

export interface OnsetPauseHost {
  /** The early answer `l` would talk over if it made a sound now, if any. */
  earlyAnswer(l: SpeakerListener): AgentTurn | undefined;
  /** The reply being heard now. */
  current(): AgentTurn | undefined;
}

export class OnsetPause {
  readonly #host: OnsetPauseHost;
  readonly #log: Logger;
  readonly #clock: Clock;
  /** `goneAt`: when `by`'s onset was last seen to stop (clock ms), while it stays gone. */
  #paused: { turn: AgentTurn; by: SpeakerListener; goneAt?: number } | undefined;

  constructor(host: OnsetPauseHost, log: Logger, clock: Clock) {
    this.#host = host;
    this.#log = log;
    this.#clock = clock;
  }

  /** Each of `l`'s frames that the detector does not yet call speech. */
  watch(l: SpeakerListener): void {
    const pending = l.onsetPending();
    const paused = this.#paused;
    if (pending && !paused) {
      const answer = this.#host.earlyAnswer(l);
      if (!answer) return;
      answer.pause();
      this.#paused = { turn: answer, by: l };
      this.#log.debug("possible onset during the early answer: paused");
    } else if (paused?.by !== l) {
      return;
    } else if (pending) {
      paused.goneAt = undefined;
    } else {
      const now = this.#clock.now();
      paused.goneAt ??= now;
      if (now - paused.goneAt < ONSET_GONE_MS) return;
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
