// One utterance decoded while it arrives, so that its transcript is ready a chunk's decode after
// the last audio instead of a whole utterance's decode after it. Decoding waits for a lead second
// of audio: the noise floor's level and the cepstral-mean estimate are taken from it (a whole
// utterance gives them in batch decoding; a second of it is close). An utterance that ends before
// its lead is decoded exactly as a batch one. Work runs on one promise chain, in order.
import { NoiseFloor, speechRms } from "./noise-floor.ts";
import { SPHINX_SAMPLE_RATE, type SphinxSegment } from "./sphinx-addon.ts";
import {
  type AsrStreamSession,
  CHUNK,
  type Decoder,
  type RecognizedWord,
  type SphinxEngine,
  toWords,
} from "./sphinx-engine.ts";

/** Audio gathered before decoding starts. */
const LEAD = SPHINX_SAMPLE_RATE;

export class SphinxStream implements AsrStreamSession {
  readonly #engine: SphinxEngine;
  readonly #hotwords: readonly string[];
  #pending: Int16Array[] = [];
  #pendingLength = 0;
  #chain: Promise<void> = Promise.resolve();
  #decoder: Decoder | undefined;
  #floor: NoiseFloor | undefined;
  /** finish() was called: no more audio. */
  #finishing = false;
  #failure: Error | undefined;
  /** The decoder's utterance was ended by the final result (so release must not end it again). */
  #utteranceEnded = false;
  /** The decoder is back in the pool: nothing more happens. */
  #closed = false;
  /** The words of the latest partial hypothesis (see #final). */
  #partial: SphinxSegment[] = [];

  constructor(engine: SphinxEngine, hotwords: readonly string[]) {
    this.#engine = engine;
    this.#hotwords = hotwords;
  }

  push(pcm: Int16Array): void {
    // After a failure (e.g. no decoder in time) the audio has nowhere to go: it is not kept.
    if (this.#finishing || this.#closed || this.#failure || pcm.length === 0) return;
    this.#pending.push(pcm.slice());
    this.#pendingLength += pcm.length;
    const ready = this.#floor ? this.#pendingLength >= CHUNK : this.#pendingLength >= LEAD;
    if (ready) this.#schedule();
  }

  finish(): Promise<RecognizedWord[]> {
    if (this.#finishing || this.#closed) {
      return Promise.reject(this.#failure ?? new Error("stream already finished"));
    }
    this.#finishing = true;
    this.#schedule();
    const result = this.#chain.then(() => this.#final());
    // The final decode is on the chain too: an abort() that comes while it runs closes after it,
    // never beside it (the decoder takes one operation at a time).
    this.#chain = result.then(
      () => undefined,
      () => undefined,
    );
    return result.finally(() => this.#close());
  }

  abort(reason = new Error("recognition aborted")): void {
    if (this.#closed) return;
    this.#failure ??= reason;
    this.#pending = [];
    this.#pendingLength = 0;
    // The decoder is released by the chain once its step in flight is over.
    this.#chain = this.#chain.then(() => this.#close()).catch(() => undefined);
  }

  #schedule(): void {
    this.#chain = this.#chain
      .then(() => this.#step())
      .catch((err: Error) => {
        this.#failure ??= err;
        this.#pending = [];
        this.#pendingLength = 0;
      });
  }

  #take(max: number): Int16Array {
    const n = Math.min(max, this.#pendingLength);
    const out = new Int16Array(n);
    let at = 0;
    while (at < n) {
      const head = this.#pending[0]!;
      const part = Math.min(head.length, n - at);
      out.set(head.subarray(0, part), at);
      at += part;
      if (part === head.length) this.#pending.shift();
      else this.#pending[0] = head.subarray(part);
    }
    this.#pendingLength -= n;
    return out;
  }

  async #step(): Promise<void> {
    if (this.#failure) return;
    const { addon } = this.#engine;
    if (!this.#floor) {
      if (this.#pendingLength === 0 || (!this.#finishing && this.#pendingLength < LEAD)) return;
      this.#decoder ??= await this.#engine.acquire();
      if (this.#failure) return;
      const lead = this.#take(this.#finishing ? this.#pendingLength : LEAD);
      this.#floor = new NoiseFloor(speechRms(lead));
      const pcm = this.#floor.apply(lead);
      addon.start(this.#decoder.handle);
      await addon.prime(this.#decoder.handle, pcm);
      for (let at = 0; at < pcm.length && !this.#failure; at += CHUNK) {
        this.#partial = (
          await addon.process(this.#decoder.handle, pcm.subarray(at, at + CHUNK), false)
        ).words;
      }
    }
    while (
      this.#decoder &&
      !this.#failure &&
      (this.#pendingLength >= CHUNK || (this.#finishing && this.#pendingLength > 0))
    ) {
      this.#partial = (
        await addon.process(this.#decoder.handle, this.#floor.apply(this.#take(CHUNK)), false)
      ).words;
    }
  }

  async #final(): Promise<RecognizedWord[]> {
    if (this.#failure) throw this.#failure;
    const d = this.#decoder;
    if (!d) return []; // no audio at all
    const phrases = this.#engine.hotwordPhrases(d, this.#hotwords);
    const result = await this.#engine.finalResult(d, phrases);
    this.#utteranceEnded = true;
    // An utterance cut off inside other speech (a caller's, ended while a talker behind them went
    // on) can leave the final search no complete path: no words at all, where the partial
    // hypothesis a moment before had them. Those words are better than none.
    const words = toWords(result.words);
    return words.length > 0 ? words : toWords(this.#partial);
  }

  async #close(): Promise<void> {
    const d = this.#decoder;
    this.#decoder = undefined;
    this.#closed = true;
    if (!d) return;
    if (!this.#utteranceEnded && this.#floor) {
      // The addon throws synchronously as well as rejecting: either way the decoder goes back.
      try {
        await this.#engine.addon.end(d.handle);
      } catch {}
    }
    this.#engine.release(d);
  }
}
