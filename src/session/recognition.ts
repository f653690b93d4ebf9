// One utterance's transcript: from its upload, which ends now, or (with no upload, or when it
// failed) from one request with the utterance cut out of the window. Both share one deadline and
// can be dropped: a recognition nobody will use (the caller went on, the turn was replaced) stops
// at once, so a call never has more than its live utterance and one recognition with the service.
// Without that, a starved service left every utterance of the last minute of every call waiting
// on its connection (over a thousand at 200 calls), each holding its audio.

import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { Recognizer } from "./services.ts";
import type { AudioWindow } from "./utterance.ts";
import type { UtteranceUpload } from "./utterance-upload.ts";

/** The longest a transcript is waited for, upload and retry together, ms. */
export const RECOGNITION_DEADLINE_MS = 15_000;

/** A caller utterance: where it lies in the audio window, and its upload if one was made. */
export interface Utterance {
  fromMs: number;
  toMs: number;
  upload: UtteranceUpload | undefined;
}

export interface RecognitionOutcome {
  text: string | undefined;
  /** Why it failed, when it did (not when it was dropped). */
  failed: string | undefined;
  dropped: boolean;
}

export class Recognition {
  readonly #drop = new AbortController();
  readonly #utterance: Utterance;
  #settled = false;

  constructor(utterance: Utterance) {
    this.#utterance = utterance;
  }

  /** Nobody will use the transcript: the upload and any retry stop now. */
  drop(): void {
    if (this.#settled || this.#drop.signal.aborted) return;
    this.#drop.abort(new Error("recognition dropped"));
    this.#utterance.upload?.abort();
  }

  async run(
    asr: Recognizer,
    audio: AudioWindow,
    sampleRate: number,
    clock: Clock,
    log: Logger,
  ): Promise<RecognitionOutcome> {
    const deadline = new AbortController();
    const timer = clock.setTimeout(
      () => deadline.abort(new Error(`no transcript within ${RECOGNITION_DEADLINE_MS} ms`)),
      RECOGNITION_DEADLINE_MS,
    );
    const signal = AbortSignal.any([this.#drop.signal, deadline.signal]);
    const upload = this.#utterance.upload;
    const onDeadline = () => upload?.abort();
    signal.addEventListener("abort", onDeadline, { once: true });
    let failed: string | undefined;
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        if (this.#drop.signal.aborted) break;
        try {
          if (attempt === 0 && upload) return { text: await upload.end(), failed: undefined, dropped: false };
          const pcm = audio.slice(this.#utterance.fromMs, this.#utterance.toMs);
          return { text: await asr.recognize(pcm, sampleRate, signal), failed: undefined, dropped: false };
        } catch (err) {
          if (this.#drop.signal.aborted) break;
          log.warn({ err: (err as Error).message, attempt }, "speech recognition failed");
          failed = (err as Error).message;
        }
      }
    } finally {
      this.#settled = true;
      clock.clearTimeout(timer);
      signal.removeEventListener("abort", onDeadline);
    }
    const dropped = this.#drop.signal.aborted;
    return { text: undefined, failed: dropped ? undefined : failed, dropped };
  }
}
