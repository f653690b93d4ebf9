// A voice at the caller's level in their speech, in the stretches it came in. A voice comes in
// syllables: voiced for a vowel or two, broken by consonants and pauses. An engine has a period
// too, and drones on: of a synthesized bus's passages as loud as the caller that the detector took
// for speech (18, in the noisy set and the flite set), 17 were voiced for 200 ms or more, but only
// 2 had 200 ms in short stretches making up half their voice. So whether an utterance held words
// (speaker-listener.ts) is judged on the voice in short stretches.

/**
 * A stretch of voice no longer than this is a syllable's (or two's), ms; longer, a drone's. A
 * slow voiced run of speech ("are you" said as one vowel) stays under it: at 300 ms, 72 of 1,579
 * questions (speaker-listener.ts SPOKE_MS) held too little voice in syllables, at 400 ms 31.
 */
export const SYLLABLE_MAX_MS = 400;

export class VoicedStretches {
  /** Where the stretch of voice last heard began and ended (stream ms). */
  #fromMs = Number.NEGATIVE_INFINITY;
  #toMs = Number.NEGATIVE_INFINITY;
  #voicedMs = 0;
  /** Voice in stretches that ended, no longer than SYLLABLE_MAX_MS, ms. */
  #endedShortMs = 0;

  /** A frame of voice, `frameMs` long, ending at stream position `nowMs`. */
  add(nowMs: number, frameMs: number): void {
    // Within half a frame of the last one's end: the same stretch.
    if (nowMs - frameMs - this.#toMs > frameMs / 2) {
      this.#endedShortMs += this.#shortMs();
      this.#fromMs = nowMs - frameMs;
    }
    this.#toMs = nowMs;
    this.#voicedMs += frameMs;
  }

  /** The voice heard, ms. */
  get voicedMs(): number {
    return this.#voicedMs;
  }

  /** The voice heard in stretches no longer than SYLLABLE_MAX_MS (the last so far included), ms. */
  get syllabicMs(): number {
    return this.#endedShortMs + this.#shortMs();
  }

  /** The last stretch's length if it is a syllable's, else 0, ms. */
  #shortMs(): number {
    const ms = this.#toMs - this.#fromMs;
    return Number.isFinite(ms) && ms <= SYLLABLE_MAX_MS ? ms : 0;
  }
}
