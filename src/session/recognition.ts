// One utterance's transcript: from its upload, which ends now, or (with no upload, or when it
// failed or was late) from one request with the utterance cut out of the window, the audio the
// bridge still holds. Each attempt has its own deadline, counted from the end of the utterance for
// the first: a person is waiting, so a late transcript is a failed one, and asked for again at once.
// Both can be dropped: a recognition nobody will use (the caller went on, the turn was replaced)
// stops at once, so a call never has more than its live utterance and one recognition with the
// service. Without that, a starved service left every utterance of the last minute of every call
// waiting on its connection (over a thousand at 200 calls), each holding its audio.

import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { RecognitionHints, Recognizer } from "./services.ts";
import type { AudioWindow } from "./utterance.ts";
import type { UtteranceUpload } from "./utterance-upload.ts";

/** Requests for one transcript at most: the upload and two sends of the held audio. */
const MAX_ATTEMPTS = 3;
/** A retry is sent only with at least this share of an attempt's deadline left in the budget. */
const MIN_ATTEMPT_SHARE = 0.25;

/** A caller utterance: where it lies in the audio window, and its upload if one was made. */
export interface Utterance {
  fromMs: number;
  toMs: number;
  upload: UtteranceUpload | undefined;
  /** What helps recognize it (the upload was opened with them). */
  hints?: RecognitionHints | undefined;
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

  /**
   * The transcript: the upload, then the held audio sent again while time is left, all within
   * twice `deadlineMs` (ServiceDeadlines.asrMs) and each attempt within `deadlineMs`. A refusal
   * comes back in a round trip, so a second refusal still leaves time for a third try.
   */
  async run(
    asr: Recognizer,
    audio: AudioWindow,
    sampleRate: number,
    clock: Clock,
    log: Logger,
    deadlineMs: number,
  ): Promise<RecognitionOutcome> {
    const upload = this.#utterance.upload;
    const budgetEnd = clock.now() + 2 * deadlineMs;
    let failed: string | undefined;
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS && !this.#drop.signal.aborted; attempt++) {
        const left = budgetEnd - clock.now();
        if (attempt > 0 && left < deadlineMs * MIN_ATTEMPT_SHARE) break;
        const waitMs = Math.min(deadlineMs, left);
        const deadline = new AbortController();
        const timer = clock.setTimeout(
          () => deadline.abort(new Error(`no transcript within ${Math.round(waitMs)} ms`)),
          waitMs,
        );
        const signal = AbortSignal.any([this.#drop.signal, deadline.signal]);
        try {
          const text =
            attempt === 0 && upload
              ? await untilAborted(upload.end(), signal, () => upload.abort())
              : await asr.recognize(
                  audio.slice(this.#utterance.fromMs, this.#utterance.toMs),
                  sampleRate,
                  signal,
                  this.#utterance.hints,
                );
          return { text, failed: undefined, dropped: false };
        } catch (err) {
          if (this.#drop.signal.aborted) break;
          const why = deadline.signal.aborted ? (deadline.signal.reason as Error) : (err as Error);
          // One line per utterance that failed for good (below); each attempt is a debug line.
          log.debug({ err: why.message, attempt }, "speech recognition attempt failed");
          failed = why.message;
        } finally {
          clock.clearTimeout(timer);
        }
      }
    } finally {
      this.#settled = true;
    }
    const dropped = this.#drop.signal.aborted;
    if (!dropped && failed)
      log.warn({ err: failed }, "speech recognition failed: no transcript for the utterance");
    return { text: undefined, failed: dropped ? undefined : failed, dropped };
  }
}

/** `p`, or its abandonment (`abandon()` called, the signal's reason thrown) once `signal` aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal, abandon: () => void): Promise<T> {
  if (signal.aborted) {
    abandon();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      abandon();
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
