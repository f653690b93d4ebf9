// BENCHMARK-ONLY speech synthesis (engine profile `synthetic`): a shaped two-tone burst per word,
// sized like speech at the voice's words-per-minute, instead of espeak-ng. It exists so that a load
// test of the bridge with hundreds of calls measures the bridge, not a formant synthesizer sharing
// its CPU cores. Deterministic: the same text and voice always give the same samples. Never a
// product voice: it says nothing, it only takes the time speech would.
import type { SynthesisRequest, TtsEngine } from "../tts/engine.ts";

/** Telephony rate, so that the bridge's 8 kHz requests need no resampling in the service. */
const RATE = 8000;
/** Share of a word's time that sounds; the rest is the gap between words. */
const VOICED = 0.8;
/** Extra silence after , ; : and after . ? ! (ms), as a speaker pauses there. */
const COMMA_PAUSE_MS = 120;
const STOP_PAUSE_MS = 250;
const PEAK = 8000; // about -12 dBFS

export class SyntheticTts implements TtsEngine {
  readonly sampleRate = RATE;
  /** One word's samples per (rate, pitch), computed once: every word sounds the same. */
  readonly #words = new Map<string, Int16Array>();
  #closed = false;

  async synthesize(req: SynthesisRequest, onPcm: (pcm: Int16Array) => void): Promise<void> {
    if (this.#closed) throw new Error("TTS engine closed");
    const wpm = Math.max(40, req.voice.wpm * req.speed);
    const word = this.#word(wpm, req.voice.pitch);
    // Tokens in order: a word, or punctuation that adds a pause after the word before it.
    for (const m of req.text.matchAll(/([\p{L}\p{N}]+(?:['’][\p{L}]+)?)|([,;:])|([.?!])/gu)) {
      // Copies: a consumer may scale the chunk in place (volume), and the word is shared.
      if (m[1]) onPcm(word.slice());
      else onPcm(new Int16Array(Math.round(((m[2] ? COMMA_PAUSE_MS : STOP_PAUSE_MS) * RATE) / 1000)));
    }
  }

  #word(wpm: number, pitch: number): Int16Array {
    const key = `${Math.round(wpm)}:${pitch}`;
    let w = this.#words.get(key);
    if (!w) {
      const n = Math.round((60 / wpm) * RATE);
      const voiced = Math.round(n * VOICED);
      const f0 = 90 + pitch * 2; // Hz: pitch 50 → 190 Hz
      w = new Int16Array(n);
      for (let i = 0; i < voiced; i++) {
        const t = i / RATE;
        const env = Math.sin((Math.PI * i) / voiced); // rises and falls like a syllable
        const v = Math.sin(2 * Math.PI * f0 * t) * 0.7 + Math.sin(2 * Math.PI * 3 * f0 * t) * 0.3;
        w[i] = Math.round(PEAK * env * v);
      }
      this.#words.set(key, w);
    }
    return w;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
