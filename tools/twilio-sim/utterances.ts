// Where the simulated caller speaks, frame by frame, by level: a frame louder than the
// threshold is speech; pauses shorter than `maxPauseMs` stay inside one utterance. This is
// the simulator's own yardstick for its timings (end of utterance → agent reply), kept
// deliberately simple and independent of the bridge's VAD.
import { levelDbfs } from "../../codecs/pcm.ts";

export interface Utterance {
  /** Frame index of the first speech frame. */
  startFrame: number;
  /** Frame index just after the last speech frame. */
  endFrame: number;
}

export interface SegmenterOptions {
  /** Level above which a frame is speech, dBFS (default -45). */
  thresholdDbfs?: number;
  /** Longest pause inside one utterance, in frames (default 25 = 500 ms at 20 ms). */
  maxPauseFrames?: number;
}

export class UtteranceSegmenter {
  readonly #threshold: number;
  readonly #maxPause: number;
  #start = -1;
  #lastSpeech = -1;

  constructor(opts: SegmenterOptions = {}) {
    this.#threshold = opts.thresholdDbfs ?? -45;
    this.#maxPause = opts.maxPauseFrames ?? 25;
  }

  /** Feeds frame `index`; returns an utterance when this frame closes one (its pause got too long). */
  push(index: number, frame: Int16Array): { speech: boolean; started: boolean; ended: Utterance | null } {
    const speech = levelDbfs(frame) > this.#threshold;
    let ended: Utterance | null = null;
    let started = false;
    if (this.#start >= 0 && !speech && index - this.#lastSpeech > this.#maxPause) {
      ended = { startFrame: this.#start, endFrame: this.#lastSpeech + 1 };
      this.#start = -1;
    }
    if (speech) {
      if (this.#start < 0) {
        this.#start = index;
        started = true;
      }
      this.#lastSpeech = index;
    }
    return { speech, started, ended };
  }

  /** Closes an utterance still open at the end of the call. */
  finish(): Utterance | null {
    if (this.#start < 0) return null;
    const u = { startFrame: this.#start, endFrame: this.#lastSpeech + 1 };
    this.#start = -1;
    return u;
  }

  get speaking(): boolean {
    return this.#start >= 0;
  }
}
