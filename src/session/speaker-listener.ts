// Listening to one speaker: their audio at 16 kHz in a rolling window, the VAD over it, and
// the utterance streamed to recognition from the moment speech starts. A phone call has one
// of these; a voice channel one per member, so each person's words are detected and
// recognized on their own. What a speech start or end means for the conversation is the
// session's business: this only reports them, at clock times as well as stream positions.
import { Resampler } from "../../codecs/resample.ts";
import type { Clock } from "../core/clock.ts";
import { PauseProfile } from "./pause-profile.ts";
import { type EndProsody, endProsody } from "./prosody.ts";
import type { Recognizer } from "./services.ts";
import type { SpeechDetector, SpeechDetectorFactory } from "./speech-detector.ts";
import type { Speaker } from "./transport.ts";
import { AudioWindow } from "./utterance.ts";
import { UtteranceUpload } from "./utterance-upload.ts";

export const VAD_RATE = 16000;

export interface ListenerEvents {
  /** The VAD heard speech begin at stream position `atMs` (the upload starts right after). */
  speechStart(l: SpeakerListener, atMs: number): void;
  speechEnd(l: SpeakerListener, atMs: number): void;
  /** A frame arrived while the speaker was not speaking: a chance to watch for an onset. */
  quietFrame(l: SpeakerListener): void;
}

export interface ListenerOptions {
  speaker: Speaker | undefined;
  inputRate: number;
  createSpeechDetector: SpeechDetectorFactory;
  asr: Recognizer;
  clock: Clock;
  events: ListenerEvents;
  /** Aborted when the call ends: whatever is still uploading stops. */
  signal: AbortSignal;
  /** Learn the speaker's pauses (else the population's model holds). */
  adaptToCaller: boolean;
}

/** Audio before an utterance's end that its end prosody is read from, ms. */
const PROSODY_MS = 1500;

export class SpeakerListener {
  readonly speaker: Speaker | undefined;
  readonly audio = new AudioWindow(VAD_RATE, 60);
  /** The VAD says this speaker is speaking. */
  speaking = false;
  /** Stream position where the utterance being spoken began (pre-roll included), ms. */
  utteranceStartMs = 0;
  /** Clock time of the latest speech start. */
  speechStartAt = 0;
  /** How this speaker pauses, learned as they talk. */
  readonly pauses: PauseProfile;
  readonly #o: ListenerOptions;
  readonly #detector: SpeechDetector;
  readonly #resampler: Resampler | undefined;
  #upsampled = new Int16Array(0);
  /** The utterance being spoken, already on its way to recognition. */
  #upload: UtteranceUpload | undefined;
  #closed = false;

  constructor(opts: ListenerOptions) {
    this.#o = opts;
    this.speaker = opts.speaker;
    this.pauses = new PauseProfile(opts.adaptToCaller);
    if (opts.inputRate !== VAD_RATE) this.#resampler = new Resampler(opts.inputRate, VAD_RATE);
    this.#detector = opts.createSpeechDetector((e) => {
      if (this.#closed) return;
      if (e.type === "speech-start") {
        this.speaking = true;
        opts.events.speechStart(this, e.atMs);
        // Whatever the speech turns out to be, recognition starts now on the utterance so far
        // (after a mid-sentence pause, from the first part's start).
        this.#upload?.abort();
        this.#upload = new UtteranceUpload(
          opts.asr.open(VAD_RATE, opts.signal),
          this.audio,
          this.utteranceStartMs,
        );
      } else {
        this.speaking = false;
        opts.events.speechEnd(this, e.atMs);
      }
    });
  }

  push(frame: Int16Array): void {
    if (this.#closed) return;
    let pcm = frame;
    if (this.#resampler) {
      // One buffer per speaker: the window and the VAD both copy what they are given.
      // Frames are all 20 ms, so one buffer of exactly the output's size serves every frame
      // (pushInto writes outputLength samples) and no view is made per frame.
      const need = this.#resampler.outputLength(frame.length);
      if (this.#upsampled.length !== need) this.#upsampled = new Int16Array(need);
      this.#resampler.pushInto(frame, this.#upsampled);
      pcm = this.#upsampled;
    }
    this.audio.write(pcm);
    this.#upload?.feed();
    this.#detector.push(pcm);
    if (!this.speaking) this.#o.events.quietFrame(this);
  }

  /** Sound the VAD has not yet called speech: the speaker may be starting again. */
  onsetPending(): boolean {
    return !this.#closed && this.#detector.onsetPending();
  }

  /** Pitch and level where the utterance ended at stream position `atMs`. */
  endProsody(atMs: number): EndProsody | undefined {
    return endProsody(this.audio.slice(Math.max(this.utteranceStartMs, atMs - PROSODY_MS), atMs));
  }

  /** Clock time at which something at stream position `atMs` happened. */
  clockAt(atMs: number): number {
    return this.#o.clock.now() - Math.max(0, this.audio.nowMs - atMs);
  }

  /** The utterance's upload, handed over at its end (undefined if there was none). */
  takeUpload(): UtteranceUpload | undefined {
    const upload = this.#upload;
    this.#upload = undefined;
    return upload;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#upload?.abort();
    this.#upload = undefined;
    this.#detector.close();
  }
}
