// Speech synthesis by an upstream server that speaks OpenAI's audio API (Kokoro or Piper servers):
// POST {upstream}/v1/audio/speech asking for `pcm` (raw 24 kHz 16-bit mono, per OpenAI), read as
// the chunks arrive and handed on at once, so the routes resample and encode in-process exactly as
// for the embedded engine. The service's voice ids map to the upstream's voices (`*` is the rest).
import { SPEECH_PATH, SPEECH_PCM_RATE, type SpeechRequestBody } from "../openai-audio.ts";
import { malformed, postUpstream, type UpstreamOptions } from "../upstream.ts";
import type { SynthesisRequest, TtsEngine } from "./engine.ts";

const WHAT = "speech server";
export const DEFAULT_TTS_UPSTREAM_MODEL = "tts-1";
export const DEFAULT_TTS_UPSTREAM_VOICE = "alloy";

export interface UpstreamTtsOptions extends UpstreamOptions {
  /** Service voice id → upstream voice; key `*` for every other voice (default `alloy`). */
  voices?: Readonly<Record<string, string>> | undefined;
}

export class UpstreamTts implements TtsEngine {
  readonly sampleRate = SPEECH_PCM_RATE;
  /** Sentences may be requested ahead of the one being played (E5 pipelines them). */
  readonly concurrent = true;
  readonly #opts: UpstreamTtsOptions;
  #closed = false;

  constructor(opts: UpstreamTtsOptions) {
    this.#opts = { ...opts, baseUrl: opts.baseUrl.replace(/\/+$/, "") };
  }

  get baseUrl(): string {
    return this.#opts.baseUrl;
  }

  voiceFor(voiceId: string | undefined): string {
    const map = this.#opts.voices ?? {};
    return (voiceId && map[voiceId]) || map["*"] || DEFAULT_TTS_UPSTREAM_VOICE;
  }

  async synthesize(
    req: SynthesisRequest,
    onPcm: (pcm: Int16Array) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    if (this.#closed) throw new Error("TTS engine closed");
    const body: SpeechRequestBody = {
      model: this.#opts.model ?? DEFAULT_TTS_UPSTREAM_MODEL,
      input: req.text,
      voice: this.voiceFor(req.voiceId),
      response_format: "pcm",
      speed: req.speed,
      ...(req.instruction ? { instructions: req.instruction } : {}),
    };
    const { res, deadline } = await postUpstream(
      WHAT,
      this.#opts,
      SPEECH_PATH,
      { headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
      signal,
    );
    const type = res.headers["content-type"] ?? "";
    if (/json|text\//i.test(type)) {
      deadline.clear();
      const text = (await res.text().catch(() => "")).slice(0, 200);
      throw malformed(WHAT, this.#opts.baseUrl, `expected pcm audio, got ${type}: ${text}`);
    }
    let rest: Uint8Array | undefined; // an odd byte waiting for its pair
    let bytes = 0;
    try {
      for await (const chunk of res.body) {
        deadline.touch();
        let c = chunk as Uint8Array;
        bytes += c.length;
        if (rest) {
          const joined = new Uint8Array(rest.length + c.length);
          joined.set(rest);
          joined.set(c, rest.length);
          c = joined;
          rest = undefined;
        }
        const even = c.length & ~1;
        if (even < c.length) rest = c.slice(even);
        if (even === 0) continue;
        const pcm = new Int16Array(even >> 1); // s16le, as this host's Int16Array (x86, ARM)
        new Uint8Array(pcm.buffer).set(c.subarray(0, even));
        onPcm(pcm);
      }
    } catch (err) {
      throw deadline.failure(err, () =>
        malformed(WHAT, this.#opts.baseUrl, `the audio broke off: ${(err as Error).message}`),
      );
    } finally {
      deadline.clear();
    }
    if (bytes === 0) throw malformed(WHAT, this.#opts.baseUrl, "no audio in the answer");
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}
