// BENCHMARK-ONLY speech recognition (engine profile `synthetic`): whatever the audio, the words of
// one fixed phrase, spread evenly over the audio's duration, at once. It lets a load test of the
// bridge drive full turns (VAD → ASR request → chat → TTS) for hundreds of calls without a
// recognizer competing with the bridge for the CPU. Never a product recognizer.
import type { AsrEngine, AsrStreamSession, RecognizedWord, RecognizeOptions } from "../asr/sphinx-engine.ts";

/** Asks the scripted demo agent something it answers in one sentence of about four seconds. */
export const SYNTHETIC_PHRASE = "what are your opening hours";

export class SyntheticAsr implements AsrEngine {
  readonly sampleRate = 16000;
  readonly #phrase: readonly string[];
  #closed = false;

  constructor(phrase = SYNTHETIC_PHRASE) {
    this.#phrase = phrase.toLowerCase().split(/\s+/).filter(Boolean);
  }

  async recognize(pcm: Int16Array, opts: RecognizeOptions = {}): Promise<RecognizedWord[]> {
    if (this.#closed) throw new Error("ASR engine closed");
    opts.signal?.throwIfAborted();
    const totalMs = (pcm.length / this.sampleRate) * 1000;
    const step = totalMs / this.#phrase.length;
    const words = this.#phrase.map((word, i) => ({
      word,
      startMs: Math.round(i * step),
      endMs: Math.round((i + 1) * step),
    }));
    opts.onWords?.(words, true);
    return words;
  }

  /** Only the audio's length matters, so a stream just counts samples. */
  openStream(): AsrStreamSession {
    let samples = 0;
    let aborted: Error | undefined;
    return {
      push: (pcm) => {
        samples += pcm.length;
      },
      finish: () => (aborted ? Promise.reject(aborted) : this.recognize(new Int16Array(samples))),
      abort: (reason) => {
        aborted = reason ?? new Error("recognition aborted");
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
