// Speech recognition by an upstream server that speaks OpenAI's audio API (faster-whisper or
// whisper.cpp servers): the utterance goes as a 16 kHz mono WAV file to
// POST {upstream}/v1/audio/transcriptions (multipart), `verbose_json` with segment and word
// timestamps when the caller wants timestamps, `json` otherwise; hotwords become the prompt.
// The answer's segments come back as "words" that are already final text (verbatim).
import { randomBytes } from "node:crypto";
import { concatPcm } from "../../../../codecs/pcm.ts";
import { encodeWav } from "../../../../codecs/wav.ts";
import {
  TRANSCRIPTIONS_PATH,
  type TranscriptionFields,
  type TranscriptionSegment,
  type TranscriptionVerbose,
  type TranscriptionWord,
} from "../openai-audio.ts";
import { malformed, postUpstream, type UpstreamOptions } from "../upstream.ts";
import type { AsrEngine, AsrStreamSession, RecognizedWord, RecognizeOptions } from "./sphinx-engine.ts";

const WHAT = "recognition server";
export const DEFAULT_ASR_UPSTREAM_MODEL = "whisper-1";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isTimed = (v: unknown, key: "text" | "word"): boolean =>
  isObj(v) && typeof v[key] === "string" && typeof v.start === "number" && typeof v.end === "number";

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
      if (opts.signal?.aborted && !deadline.expired) throw err;
      throw deadline.expired
        ? deadline.error(err)
        : malformed(WHAT, this.#opts.baseUrl, `the answer broke off: ${(err as Error).message}`);
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
    if (!isObj(j) || typeof j.text !== "string") {
      throw malformed(WHAT, this.#opts.baseUrl, `no "text" in ${body.slice(0, 120)}`);
    }
    const v = j as unknown as TranscriptionVerbose;
    const ms = (s: number) => Math.round(s * 1000);
    if (Array.isArray(v.segments) && v.segments.length > 0) {
      if (!v.segments.every((s) => isTimed(s, "text")))
        throw malformed(WHAT, this.#opts.baseUrl, "a segment lacks text, start or end");
      return v.segments
        .map((s: TranscriptionSegment) => ({ word: s.text.trim(), startMs: ms(s.start), endMs: ms(s.end) }))
        .filter((w) => w.word !== "");
    }
    if (Array.isArray(v.words) && v.words.length > 0) {
      if (!v.words.every((w) => isTimed(w, "word")))
        throw malformed(WHAT, this.#opts.baseUrl, "a word lacks word, start or end");
      return v.words
        .map((w: TranscriptionWord) => ({ word: w.word.trim(), startMs: ms(w.start), endMs: ms(w.end) }))
        .filter((w) => w.word !== "");
    }
    const text = v.text.trim();
    return text ? [{ word: text, startMs: 0, endMs: Math.round(durationMs) }] : [];
  }

  /** A streamed utterance is gathered here and sent when it ends (one request per utterance). */
  openStream(opts: Pick<RecognizeOptions, "hotwords" | "language" | "timestamps"> = {}): AsrStreamSession {
    const parts: Int16Array[] = [];
    const ac = new AbortController();
    return {
      push: (pcm) => {
        if (pcm.length > 0) parts.push(pcm.slice());
      },
      finish: () => {
        if (ac.signal.aborted) return Promise.reject(ac.signal.reason as Error);
        return this.recognize(concatPcm(parts), { ...opts, signal: ac.signal });
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
