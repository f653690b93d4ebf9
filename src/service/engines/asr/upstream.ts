// Speech recognition by an upstream server that speaks OpenAI's audio API (faster-whisper or
// whisper.cpp servers): the utterance goes as a 16 kHz mono WAV file to
// POST {upstream}/v1/audio/transcriptions (multipart), `verbose_json` with segment and word
// timestamps when the caller wants timestamps, `json` otherwise; hotwords become the prompt.
// The answer's segments come back as "words" that are already final text (verbatim).
import { randomBytes } from "node:crypto";
import { concatPcm } from "../../../../codecs/pcm.ts";
import { encodeWav } from "../../../../codecs/wav.ts";
import { isObject } from "../../../core/guards.ts";
import { TRANSCRIPTIONS_PATH, type TranscriptionFields, type TranscriptionVerbose } from "../openai-audio.ts";
import { malformed, postUpstream, type UpstreamOptions } from "../upstream.ts";
import type { AsrEngine, AsrStreamSession, RecognizedWord, RecognizeOptions } from "./sphinx-engine.ts";

const WHAT = "recognition server";
/** A streamed utterance longer than this is sent in pieces, cut at pauses (seconds). */
export const PIECE_MIN_S = 8;
/** A quiet stretch this long (seconds) is a pause between words: a piece may end there. */
const PAUSE_S = 0.3;
/** Below this mean absolute level (about -50 dBFS) a chunk is quiet. */
const QUIET_LEVEL = 100;

/** Samples of quiet at the end of `pcm`, in 20 ms frames, added to `before` when all of it is quiet. */
function trailingQuiet(pcm: Int16Array, before: number, rate: number): number {
  const frame = Math.round(rate / 50);
  let quiet = before;
  for (let at = 0; at < pcm.length; at += frame) {
    const end = Math.min(pcm.length, at + frame);
    let sum = 0;
    for (let i = at; i < end; i++) sum += Math.abs(pcm[i]!);
    quiet = sum / (end - at) < QUIET_LEVEL ? quiet + (end - at) : 0;
  }
  return quiet;
}
export const DEFAULT_ASR_UPSTREAM_MODEL = "whisper-1";

const isTimed = (v: unknown, key: "text" | "word"): boolean =>
  isObject(v) && typeof v[key] === "string" && typeof v.start === "number" && typeof v.end === "number";

export class UpstreamAsr implements AsrEngine {
  /** The rate of the WAV sent upstream: what Whisper models take. */
  readonly sampleRate = 16000;
  readonly verbatim = true;
  readonly languages = ["en", "zh"] as const;
  readonly #opts: UpstreamOptions;
  #closed = false;

  constructor(opts: UpstreamOptions) {
    this.#opts = { ...opts, baseUrl: opts.baseUrl.replace(/\/+$/, "") };
  }

  get baseUrl(): string {
    return this.#opts.baseUrl;
  }

  async recognize(pcm: Int16Array, opts: RecognizeOptions = {}): Promise<RecognizedWord[]> {
    if (this.#closed) throw new Error("ASR engine closed");
    const fields: TranscriptionFields = {
      model: this.#opts.model ?? DEFAULT_ASR_UPSTREAM_MODEL,
      response_format: opts.timestamps ? "verbose_json" : "json",
    };
    if (opts.language) fields.language = opts.language;
    const hotwords = (opts.hotwords ?? []).map((h) => h.trim()).filter(Boolean);
    if (hotwords.length > 0) fields.prompt = hotwords.join(", ");
    if (opts.timestamps) fields["timestamp_granularities[]"] = ["segment", "word"];
    const form = multipart(fields, encodeWav(pcm, this.sampleRate));
    const { res, deadline } = await postUpstream(
      WHAT,
      this.#opts,
      TRANSCRIPTIONS_PATH,
      { headers: { accept: "application/json", "content-type": form.type }, body: form.body },
      opts.signal,
    );
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw deadline.failure(err, () =>
        malformed(WHAT, this.#opts.baseUrl, `the answer broke off: ${(err as Error).message}`),
      );
    } finally {
      deadline.clear();
    }
    const words = this.#words(text, (pcm.length / this.sampleRate) * 1000);
    opts.onWords?.(words, true);
    return words;
  }

  /** The answer's pieces: segments (or words) with their times, else the whole text at once. */
  #words(body: string, durationMs: number): RecognizedWord[] {
    let j: unknown;
    try {
      j = JSON.parse(body);
    } catch {
      throw malformed(WHAT, this.#opts.baseUrl, `not JSON: ${body.slice(0, 120) || "(empty)"}`);
    }
    if (!isObject(j) || typeof j.text !== "string") {
      throw malformed(WHAT, this.#opts.baseUrl, `no "text" in ${body.slice(0, 120)}`);
    }
    const v = j as unknown as TranscriptionVerbose;
    if (Array.isArray(v.segments) && v.segments.length > 0)
      return this.#timed(v.segments, "text", "a segment lacks text, start or end");
    if (Array.isArray(v.words) && v.words.length > 0)
      return this.#timed(v.words, "word", "a word lacks word, start or end");
    const text = v.text.trim();
    return text ? [{ word: text, startMs: 0, endMs: Math.round(durationMs) }] : [];
  }

  /** Segments (their `text`) or words (their `word`) as recognized words, each checked for its times. */
  #timed<K extends "text" | "word">(
    items: readonly (Record<K, string> & { start: number; end: number })[],
    key: K,
    lacking: string,
  ): RecognizedWord[] {
    if (!items.every((it) => isTimed(it, key))) throw malformed(WHAT, this.#opts.baseUrl, lacking);
    const ms = (s: number) => Math.round(s * 1000);
    return items
      .map((it) => ({ word: it[key].trim(), startMs: ms(it.start), endMs: ms(it.end) }))
      .filter((w) => w.word !== "");
  }

  /**
   * A streamed utterance is gathered as it arrives. A long one is sent in pieces while the caller
   * is still speaking: once PIECE_MIN_S have gathered, the audio up to the next pause (a quiet
   * stretch between words, so no word is cut) goes upstream at once; at the end only the rest is
   * left to wait for. The pieces' words are joined in order, their times shifted to the utterance.
   * A short utterance (most turns of a call) is one request, sent when the body ends.
   */
  openStream(opts: Pick<RecognizeOptions, "hotwords" | "language" | "timestamps"> = {}): AsrStreamSession {
    const ac = new AbortController();
    const pieces: Promise<RecognizedWord[]>[] = [];
    let parts: Int16Array[] = [];
    let gathered = 0; // samples in `parts`
    let offset = 0; // samples sent in earlier pieces
    let quiet = 0; // samples of the current quiet stretch
    const send = (pcm: Int16Array, atSample: number) => {
      const shift = Math.round((atSample / this.sampleRate) * 1000);
      const piece = this.recognize(pcm, { ...opts, signal: ac.signal }).then((ws) =>
        ws.map((w) => ({ ...w, startMs: w.startMs + shift, endMs: w.endMs + shift })),
      );
      piece.catch(() => {}); // reported by finish()
      pieces.push(piece);
    };
    return {
      push: (pcm) => {
        if (pcm.length === 0 || ac.signal.aborted) return;
        parts.push(pcm.slice());
        gathered += pcm.length;
        quiet = trailingQuiet(pcm, quiet, this.sampleRate);
        if (gathered >= PIECE_MIN_S * this.sampleRate && quiet >= PAUSE_S * this.sampleRate) {
          send(concatPcm(parts), offset);
          offset += gathered;
          parts = [];
          gathered = 0;
          quiet = 0;
        }
      },
      finish: async () => {
        if (ac.signal.aborted) throw ac.signal.reason as Error;
        if (gathered > 0 || pieces.length === 0) send(concatPcm(parts), offset);
        return (await Promise.all(pieces)).flat();
      },
      abort: (reason) => ac.abort(reason ?? new Error("recognition aborted")),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/**
 * The multipart/form-data body of a transcription request, built at once (the WAV file first, then
 * the fields, repeated ones as repeated parts): one buffer, no stream of parts to assemble.
 */
export function multipart(fields: TranscriptionFields, wav: Uint8Array): { type: string; body: Buffer } {
  const boundary = `----voice-bridge-${randomBytes(12).toString("hex")}`;
  const parts: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="audio.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
    ),
    Buffer.from(wav.buffer, wav.byteOffset, wav.byteLength),
  ];
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      parts.push(
        Buffer.from(`\r\n--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}`),
      );
    }
  }
  parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return { type: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}
