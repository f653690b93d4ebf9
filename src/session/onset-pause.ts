// While an early answer has just begun (the caller's pause may be mid-sentence), a possible onset
// pauses it at once: speech-start comes 100–150 ms after the onset, and until then the caller who
// goes on would hear the agent over them. If the onset dies away without becoming speech (a
// click, a breath), the answer goes on from where it stopped.
import type { Logger } from "../core/log.ts";
import type { AgentTurn } from "./agent-turn.ts";
import type { SpeakerListener } from "./speaker-listener.ts";

/**
 * How long an onset must be gone before it has died away, ms of audio: then the answer goes on. In
 * a loud room a frame is judged by its own level, and a syllable's soft frame (a fricative, a
 * stop's closure) fell under the bar for one or two frames: the answer went on for 20–40 ms and was
 * paused again, a chirp of the agent over a caller going on (pa:10: 5 of 15 onsets that died away
 * came back within 100 ms; cafe:10 drawn anew: one went on 4 ms before the caller's speech began).
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
  /** `goneMs`: audio heard since `by`'s onset was last pending. */
  #paused: { turn: AgentTurn; by: SpeakerListener; goneMs: number } | undefined;

  constructor(host: OnsetPauseHost, log: Logger) {
    this.#host = host;
    this.#log = log;
  }

  /**
   * Each of `l`'s frames (`frameMs` of audio) that the detector does not yet call speech. The answer
   * goes on once the onset has been gone ONSET_GONE_MS, not at its first soft frame.
   */
  watch(l: SpeakerListener, frameMs: number): void {
    const pending = l.onsetPending();
    const paused = this.#paused;
    if (!paused) {
      if (!pending) return;
      const answer = this.#host.earlyAnswer(l);
      if (!answer) return;
      answer.pause();
      this.#paused = { turn: answer, by: l, goneMs: 0 };
      this.#log.debug("possible onset during the early answer: paused");
    } else if (paused.by === l) {
      paused.goneMs = pending ? 0 : paused.goneMs + frameMs;
      if (paused.goneMs < ONSET_GONE_MS) return;
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
