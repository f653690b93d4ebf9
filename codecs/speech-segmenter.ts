// Turns a sequence of per-window speech probabilities into speech-start / speech-end events, with
// hysteresis (two thresholds) and minimum durations. Pure and synchronous: positions come from the
// caller (audio time), never from a clock, so it is tested deterministically on virtual time.

export interface SpeechSegmenterOptions {
  /** Probability at or above which a window counts as speech. Default 0.5. */
  threshold?: number;
  /** Probability below which a window counts as silence; in between, the current state holds. Default threshold − 0.15. */
  negThreshold?: number;
  /**
   * The threshold for a window update() is told stands out as a near voice (its `near`): a voice
   * loud on the line under a loud room, which Silero scores lower than the same voice in quiet.
   * Outside speech its silence threshold is this − 0.15 (at most negThreshold); inside, such a
   * window is never silence. Default threshold: no difference.
   */
  nearThreshold?: number;
  /** Speech must last this long (from its first speech window) before speech-start is reported. Default 64. */
  minSpeechMs?: number;
  /** Silence must last this long before speech-end is reported. Default 160. */
  minSilenceMs?: number;
  /** Widens reported segments: starts move earlier, ends later, by this much. Default 0. */
  speechPadMs?: number;
  /**
   * How far a boundary may be moved by the level cue given to update() (see there). Default 160 ms,
   * about the largest lag of Silero's probability behind the audio; 0 turns the refinement off.
   */
  maxRefineMs?: number;
}

/**
 * What the audio's owner says of a window (SpeechSegmenter.update's `near`): it stands out as a
 * near voice (true), or as one so clear of a room that seldom sounds like a voice that it is
 * speech whatever the model scored it ("clear"; caller-voice.ts says when).
 */
export type NearWindow = boolean | "clear";

export interface VadEvent {
  type: "speech-start" | "speech-end";
  /** Position of the boundary in the audio stream, in ms since the detector started. */
  atMs: number;
}

export class SpeechSegmenter {
  readonly threshold: number;
  readonly negThreshold: number;
  readonly nearThreshold: number;
  readonly nearNegThreshold: number;
  readonly minSpeechMs: number;
  readonly minSilenceMs: number;
  readonly speechPadMs: number;
  readonly maxRefineMs: number;
  private inSpeech = false;
  /** Start of the current run of loud windows, or null. */
  private loudRunMs: number | null = null;
  /** Start of the loud run the candidate's first window belonged to. */
  private candidateLoudMs: number | null = null;
  /** End of the last loud window heard in the current segment. */
  private lastLoudEndMs: number | null = null;
  /** Start of the first window of a run of speech not yet long enough to report. */
  private candidateMs: number | null = null;
  /** Start of the first silent window since speech was last heard. */
  private silenceSinceMs: number | null = null;
  private lastEndMs = 0;
  /** End of the last window given to update(). */
  private lastWindowEndMs = 0;

  constructor(options: SpeechSegmenterOptions = {}) {
    this.threshold = options.threshold ?? 0.5;
    this.negThreshold = options.negThreshold ?? Math.max(0.01, this.threshold - 0.15);
    this.nearThreshold = Math.min(this.threshold, options.nearThreshold ?? this.threshold);
    this.nearNegThreshold = Math.max(0.01, Math.min(this.negThreshold, this.nearThreshold - 0.15));
    this.minSpeechMs = options.minSpeechMs ?? 64;
    this.minSilenceMs = options.minSilenceMs ?? 160;
    this.speechPadMs = options.speechPadMs ?? 0;
    this.maxRefineMs = options.maxRefineMs ?? 160;
    if (!(this.threshold > 0 && this.threshold <= 1)) throw new RangeError("threshold must be in (0, 1]");
    if (!(this.negThreshold > 0 && this.negThreshold <= this.threshold)) {
      throw new RangeError("negThreshold must be in (0, threshold]");
    }
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  /**
   * Inside speech, how long the windows have been silent so far (0 while speech goes on, and
   * outside speech): speech-end comes once this reaches minSilenceMs.
   */
  get pausedMs(): number {
    return this.inSpeech && this.silenceSinceMs !== null ? this.lastWindowEndMs - this.silenceSinceMs : 0;
  }

  /**
   * Outside speech, something that may be its start is under way: the last window was loud, or
   * windows scored as speech have not yet lasted minSpeechMs. speech-start follows an onset by
   * 100–150 ms (the model's lag plus minSpeechMs); this tells, meanwhile, that it may be coming.
   */
  get onsetPending(): boolean {
    return !this.inSpeech && (this.candidateMs !== null || this.loudRunMs !== null);
  }

  /**
   * Feeds the probability of the window [startMs, endMs); returns the event it completes, if any.
   *
   * `loud` (optional) says whether the window's level stands clearly above the noise floor. Silero's
   * recurrent state makes its probability rise a window or two after an onset and fall 100–150 ms after
   * speech stops; the level shows both edges at once. So when a boundary is decided, its position is
   * moved back to the matching level edge, by at most maxRefineMs: the start of the loud run the speech
   * began in, the end of the last loud window before the silence. (Sounds too weak to rise above the
   * noise, like a final "s" under loud hiss, are lost to both cues.) Decisions, and so their timing,
   * are made on probabilities alone.
   */
  update(
    probability: number,
    startMs: number,
    endMs: number,
    loud?: boolean,
    near?: NearWindow,
  ): VadEvent | null {
    this.lastWindowEndMs = endMs;
    const isNear = near === true || near === "clear";
    const speech = probability >= (isNear ? this.nearThreshold : this.threshold) || near === "clear";
    const off = isNear ? this.nearNegThreshold : this.negThreshold;
    if (loud === true) this.loudRunMs ??= startMs;
    else this.loudRunMs = null;
    if (!this.inSpeech) {
      if (speech) {
        if (this.candidateMs === null) {
          this.candidateMs = startMs;
          this.candidateLoudMs = this.loudRunMs;
        }
      } else if (probability < off) {
        this.candidateMs = null;
      }
      if (this.candidateMs !== null && endMs - this.candidateMs >= this.minSpeechMs) {
        this.inSpeech = true;
        this.silenceSinceMs = null;
        this.lastLoudEndMs = loud === true ? endMs : null;
        let start = this.candidateMs;
        const onset = this.candidateLoudMs;
        if (onset !== null && onset < start) start = Math.max(onset, start - this.maxRefineMs);
        const atMs = Math.max(this.lastEndMs, start - this.speechPadMs, 0);
        this.candidateMs = null;
        return { type: "speech-start", atMs };
      }
      return null;
    }
    if (loud === true) this.lastLoudEndMs = endMs;
    // A near voice goes on however Silero scores it: a caller 10 dB over a café, heard at 0.3–0.44,
    // scored 0.1–0.29 for the rest of their question, and their speech ended 670 ms before it did.
    if (speech || isNear) {
      this.silenceSinceMs = null;
    } else if (probability < off) {
      this.silenceSinceMs ??= startMs;
    }
    if (this.silenceSinceMs !== null && endMs - this.silenceSinceMs >= this.minSilenceMs) {
      let end = this.silenceSinceMs;
      const offset = this.lastLoudEndMs;
      if (offset !== null && offset < end) end = Math.max(offset, end - this.maxRefineMs);
      const atMs = Math.min(end + this.speechPadMs, endMs);
      this.inSpeech = false;
      this.silenceSinceMs = null;
      this.lastEndMs = atMs;
      return { type: "speech-end", atMs };
    }
    return null;
  }

  /** Ends an open segment at `atMs` (end of the audio), e.g. when the stream stops mid-speech. */
  finish(atMs: number): VadEvent | null {
    this.candidateMs = null;
    if (!this.inSpeech) return null;
    this.inSpeech = false;
    const end = this.silenceSinceMs ?? atMs;
    this.silenceSinceMs = null;
    this.lastEndMs = end;
    return { type: "speech-end", atMs: end };
  }

  reset(): void {
    this.inSpeech = false;
    this.candidateMs = null;
    this.candidateLoudMs = null;
    this.loudRunMs = null;
    this.lastLoudEndMs = null;
    this.silenceSinceMs = null;
    this.lastEndMs = 0;
    this.lastWindowEndMs = 0;
  }
}
