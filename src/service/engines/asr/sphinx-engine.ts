// Speech recognition on PocketSphinx kept loaded in-process: a small pool of decoders (one decoder
// serves one utterance at a time), each created once and reused. Audio is fed in short chunks so
// that partial hypotheses stream out while decoding runs. Hotwords bias the final result: the
// lattice's best alternatives are rescored with a bonus per hotword word they contain, so a
// hotword wins where the audio supports it about as well as what the language model preferred.
import { cpus } from "node:os";
import { join } from "node:path";
import { BoundedWaitQueue, type WaitBound } from "../busy.ts";
import { hotwordHits, hotwordTokens } from "./hotwords.ts";
import { withNoiseFloor } from "./noise-floor.ts";
import {
  type DecoderHandle,
  loadSphinxAddon,
  SPHINX_FRAME_RATE,
  SPHINX_SAMPLE_RATE,
  type SphinxAddon,
  type SphinxResult,
  type SphinxSegment,
} from "./sphinx-addon.ts";
import { SphinxStream } from "./sphinx-stream.ts";

export interface RecognizedWord {
  /** Lower-case dictionary word. */
  word: string;
  /** Milliseconds into the audio. */
  startMs: number;
  endMs: number;
}

export interface RecognizeOptions {
  hotwords?: readonly string[];
  /**
   * Called with words as they become settled while decoding runs (final = false), then once with
   * the words of the final hypothesis after the last delivered one (final = true). Delivered words
   * are committed: the resolved list is exactly what was delivered, in order.
   */
  onWords?: (words: RecognizedWord[], final: boolean) => void;
  signal?: AbortSignal;
  /** Recognition language (E6's `en` / `zh`); engines that know only one ignore it. */
  language?: string;
  /** Whether the caller wants timestamps (an upstream is asked for them only then). */
  timestamps?: boolean;
}

/** One utterance recognized while it is still arriving. */
export interface AsrStreamSession {
  /** Adds audio (mono 16-bit PCM at the engine's rate); the chunk may be reused after the call. */
  push(pcm: Int16Array): void;
  /** No more audio: resolves with the words of the final hypothesis. */
  finish(): Promise<RecognizedWord[]>;
  /** Drops the utterance; a pending finish() rejects. */
  abort(reason?: Error): void;
}

export interface AsrEngine {
  /** Rate the engine wants its mono 16-bit PCM at. */
  readonly sampleRate: number;
  /** Recognizes one utterance; resolves with the words of the final hypothesis. */
  recognize(pcm: Int16Array, opts?: RecognizeOptions): Promise<RecognizedWord[]>;
  /** Starts recognizing an utterance whose audio is still arriving (see AsrStreamSession). */
  openStream(opts?: Pick<RecognizeOptions, "hotwords" | "language" | "timestamps">): AsrStreamSession;
  close(): Promise<void>;
  /**
   * True when a "word" is already final text (an upstream recognizer's segment, cased, punctuated
   * and normalized): it is passed on as it is, without inverse text normalization.
   */
  readonly verbatim?: boolean;
  /** Languages recognized; default English only. */
  readonly languages?: readonly string[];
}

export const DEFAULT_MODEL_DIR = "/usr/share/pocketsphinx/model/en-us";

export interface SphinxEngineOptions {
  modelDir?: string;
  /**
   * Decoders kept loaded (utterances decoded at once; ~100 MB each). Default: the number of CPUs
   * plus two, since a streamed utterance holds its decoder while the caller is still speaking.
   */
  decoders?: number;
  /** Score bonus per hotword word in a lattice alternative (log base 1.0001 units). */
  hotwordBonus?: number;
  /** Extra decoder arguments (pocketsphinx_continuous style), after the defaults. */
  args?: string[];
  /**
   * How long and how many utterances may wait for a decoder before one is refused (busy.ts).
   * Default 10 s (the bridge gives a recognition 15 s in all) and 512.
   */
  wait?: Partial<WaitBound>;
}

/**
 * Decoder settings measured on this engine's hotline test set: no second (flat) pass and bounded
 * active HMMs/words per frame decode ~2.5x faster than the defaults at the same word error rate.
 */
const SPEED_ARGS = ["-fwdflat", "no", "-maxhmmpf", "3000", "-maxwpf", "10"];
/** Chunk fed per step: 250 ms, so a partial result follows every quarter second of audio. */
export const CHUNK = SPHINX_SAMPLE_RATE / 4;
/** A word counts as settled once it ended this many frames before the decoder's current frame. */
const SETTLE_FRAMES = 80;
/** Bonus per hotword word, chosen on a tuning set of hotline phrases apart from the tests'. */
const HOTWORD_BONUS = 500;
/** Lattice alternatives rescored for hotwords. */
const NBEST = 30;

export interface Decoder {
  handle: DecoderHandle;
}

function isFiller(word: string): boolean {
  return word.startsWith("<") || word.startsWith("[") || word === "";
}

export function toWords(segs: readonly SphinxSegment[]): RecognizedWord[] {
  const out: RecognizedWord[] = [];
  for (const s of segs) {
    if (isFiller(s.word)) continue;
    out.push({
      word: s.word.replace(/\(\d+\)$/, ""),
      startMs: Math.round((s.startFrame * 1000) / SPHINX_FRAME_RATE),
      endMs: Math.round(((s.endFrame + 1) * 1000) / SPHINX_FRAME_RATE),
    });
  }
  return out;
}

export class SphinxEngine implements AsrEngine {
  readonly sampleRate = SPHINX_SAMPLE_RATE;
  readonly addon: SphinxAddon;
  private readonly args: string[];
  private readonly maxDecoders: number;
  private readonly bonus: number;
  private readonly idle: Decoder[] = [];
  private readonly waiting: BoundedWaitQueue<Decoder>;
  private created = 0;
  private closed = false;
  private preloading = false;

  constructor(opts: SphinxEngineOptions = {}) {
    this.addon = loadSphinxAddon();
    const dir = opts.modelDir ?? DEFAULT_MODEL_DIR;
    this.args = [
      "-hmm",
      join(dir, "en-us"),
      "-lm",
      join(dir, "en-us.lm.bin"),
      "-dict",
      join(dir, "cmudict-en-us.dict"),
      "-logfn",
      "/dev/null",
      ...SPEED_ARGS,
      ...(opts.args ?? []),
    ];
    this.maxDecoders = Math.max(1, opts.decoders ?? cpus().length + 2);
    this.bonus = opts.hotwordBonus ?? HOTWORD_BONUS;
    this.waiting = new BoundedWaitQueue("asr", { maxWaitMs: 10_000, maxWaiting: 512, ...opts.wait });
  }

  /** Loads the first decoder now, so no request pays the model load (about a second). */
  async start(): Promise<void> {
    if (this.created === 0) this.release(await this.createDecoder());
  }

  /**
   * Loads the rest of the pool in the background. Streams call it: they hold decoders for as long
   * as callers speak, so a service that streams needs the whole pool, and a mid-call model load
   * would stall a turn.
   */
  preload(): void {
    if (this.preloading) return;
    this.preloading = true;
    void this.preloadRest();
  }

  private async preloadRest(): Promise<void> {
    while (!this.closed && this.created < this.maxDecoders) {
      try {
        this.release(await this.createDecoder());
      } catch {
        return; // the first decoder loaded, so this is memory pressure: make do with fewer
      }
    }
  }

  private async createDecoder(): Promise<Decoder> {
    this.created++;
    try {
      return { handle: await this.addon.create(this.args) };
    } catch (err) {
      this.created--;
      throw err;
    }
  }

  /** A decoder of the pool, waiting for one when all are busy. (For SphinxStream.) */
  async acquire(): Promise<Decoder> {
    if (this.closed) throw new Error("ASR engine closed");
    const d = this.idle.pop();
    if (d) return d;
    if (this.created < this.maxDecoders) return this.createDecoder();
    return this.waiting.wait();
  }

  release(d: Decoder): void {
    if (this.closed) {
      this.addon.free(d.handle);
      return;
    }
    if (!this.waiting.give(d)) this.idle.push(d);
  }

  /** Hotword phrases as dictionary words; phrases with a word the dictionary lacks are dropped. */
  hotwordPhrases(d: Decoder, hotwords: readonly string[] | undefined): string[][] {
    return (hotwords ?? [])
      .map(hotwordTokens)
      .filter((p) => p.length > 0 && p.every((w) => this.addon.lookup(d.handle, w) !== null));
  }

  /**
   * The final result: the best path, or with hotwords a lattice alternative holding more hotword
   * words whose score, plus the bonus for each extra hotword word, beats the best path's.
   */
  async finalResult(d: Decoder, phrases: readonly string[][]): Promise<SphinxResult> {
    if (phrases.length === 0) return this.addon.end(d.handle);
    const r = await this.addon.end(d.handle, NBEST);
    const alts = r.nbest ?? [];
    if (alts.length === 0) return r;
    const hits = (res: SphinxResult) =>
      hotwordHits(
        toWords(res.words).map((w) => w.word),
        phrases,
      );
    const baseHits = hits(r);
    const baseScore = alts.find((a) => a.hyp === r.hyp)?.score ?? Math.max(...alts.map((a) => a.score));
    let best: SphinxResult = r;
    let bestGain = 0;
    for (const alt of alts) {
      const extra = hits(alt) - baseHits;
      if (extra <= 0) continue;
      const gain = alt.score + this.bonus * extra - baseScore;
      if (gain > bestGain) {
        best = alt;
        bestGain = gain;
      }
    }
    return best;
  }

  async recognize(input: Int16Array, opts: RecognizeOptions = {}): Promise<RecognizedWord[]> {
    const pcm = withNoiseFloor(input);
    const d = await this.acquire();
    let started = false;
    try {
      const phrases = this.hotwordPhrases(d, opts.hotwords);
      this.addon.start(d.handle);
      started = true;
      // The whole utterance is at hand: normalize with its own cepstral mean (as batch CMN does)
      // rather than with whatever the previous request left, and still decode chunk by chunk.
      await this.addon.prime(d.handle, pcm);
      let delivered = 0;
      const committed: RecognizedWord[] = [];
      let previous: RecognizedWord[] = [];
      for (let at = 0; at < pcm.length; at += CHUNK) {
        opts.signal?.throwIfAborted();
        const partial = toWords(
          (await this.addon.process(d.handle, pcm.subarray(at, at + CHUNK), false)).words,
        );
        if (!opts.onWords) continue;
        const nowMs = ((Math.min(pcm.length, at + CHUNK) / SPHINX_SAMPLE_RATE) * 1000) | 0;
        let settled = 0;
        while (
          settled < partial.length &&
          settled < previous.length &&
          partial[settled]!.word === previous[settled]!.word &&
          partial[settled]!.startMs === previous[settled]!.startMs &&
          partial[settled]!.endMs < nowMs - SETTLE_FRAMES * 10
        ) {
          settled++;
        }
        const agrees = committed.every(
          (w, i) => partial[i]?.word === w.word && partial[i]?.startMs === w.startMs,
        );
        if (agrees && settled > delivered) {
          const fresh = partial.slice(delivered, settled);
          committed.push(...fresh);
          opts.onWords(fresh, false);
          delivered = settled;
        }
        previous = partial;
      }
      const last = toWords((await this.finalResult(d, phrases)).words);
      started = false;
      // Words already streamed are committed: the result is those words, then the final
      // hypothesis's words after them, so the streamed pieces always add up to the result.
      const edge = committed.at(-1)?.endMs ?? 0;
      const tail = committed.length === 0 ? last : last.filter((w) => w.startMs >= edge);
      opts.onWords?.(tail, true);
      return [...committed, ...tail];
    } finally {
      if (started) await this.addon.end(d.handle).catch(() => {});
      this.release(d);
    }
  }

  openStream(opts: Pick<RecognizeOptions, "hotwords"> = {}): AsrStreamSession {
    this.preload();
    return new SphinxStream(this, opts.hotwords ?? []);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiting.rejectAll(new Error("ASR engine closed"));
    for (const d of this.idle.splice(0)) this.addon.free(d.handle);
  }
}
