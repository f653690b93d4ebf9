// E6 POST /v1/audio/asr/sse (and /svc_plan/v1/audio/asr/sse): one Base64 audio submission, the
// transcript streamed back as SSE (transcript.text.delta while decoding, transcript.text.done, or an
// error event). Parameter errors are answered with HTTP 400 before the stream starts.
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ASR_FORMATS, ASR_MODELS } from "../../api/types/asr.ts";
import { API_PREFIX, PATHS, PLAN_PREFIX } from "../../api/types/paths.ts";
import { isObject, type JsonObject } from "../../core/guards.ts";
import { overloaded } from "../conditions/index.ts";
import type { ServiceRoute } from "../context.ts";
import type { AsrEngine, AsrStreamSession, RecognizedWord } from "../engines/asr/sphinx-engine.ts";
import { badParam, missingParam } from "../errors.ts";
import { countTokens } from "../generation/tokens.ts";
import { AsrBodyReader } from "../speech/asr-body.ts";
import { AudioInputError, decodeAsrAudio, PcmChunkDecoder, type PcmFormat } from "../speech/asr-input.ts";
import { acquireSpeechEngines, type SpeechEnginesHandle } from "../speech/engines.ts";
import { TranscriptBuilder, transcriptText } from "../speech/transcript.ts";
import { SseWriter, sseData } from "../sse-writer.ts";

/** Audio Base64 can be large: 16 MB of JSON is ~12 MB of audio (minutes of wav). */
const BODY_LIMIT = 16 * 1024 * 1024;
/** Audio tokens per second of input, for usage. */
const AUDIO_TOKENS_PER_SECOND = 25;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

interface AsrJob {
  audio: Uint8Array;
  type: "wav" | "pcm" | "ogg" | "mp3";
  pcm?: PcmFormat;
  language: "en" | "zh";
  hotwords: string[];
  itn: boolean;
  timestamps: boolean;
}

function optBool(v: unknown, param: string, dflt: boolean): boolean {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "boolean") throw badParam(param, "must be a boolean");
  return v;
}

function positiveInt(v: unknown, param: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0)
    throw badParam(param, "must be a positive integer");
  return v;
}

/**
 * The request's parameters. `streamed` is audio.data already read out of the body as bytes (see
 * AsrBodyReader), in which case the body's own audio.data is not looked at.
 */
export function parseAsrBody(body: unknown, streamed?: Uint8Array): AsrJob {
  const params = parseAsrParams(body);
  const audio = (body as { audio: JsonObject }).audio;
  if (streamed) {
    if (streamed.length === 0) throw missingParam("audio.data", "Base64-encoded audio");
    return { ...params, audio: streamed };
  }
  if (typeof audio.data !== "string" || audio.data === "") {
    throw missingParam("audio.data", "Base64-encoded audio");
  }
  const data = audio.data.replace(/\s+/g, "");
  if (!BASE64.test(data)) throw badParam("audio.data", "is not Base64");
  return { ...params, audio: Buffer.from(data, "base64") };
}

/** Everything but the audio data. */
export function parseAsrParams(body: unknown): Omit<AsrJob, "audio"> {
  if (!isObject(body)) throw badParam("body", "must be a JSON object");
  const audio = body.audio;
  if (!isObject(audio)) throw missingParam("audio", "an object with data and input");
  const input = audio.input;
  if (!isObject(input)) throw missingParam("audio.input", "an object with format (and transcription)");
  const format = input.format;
  if (!isObject(format)) throw missingParam("audio.input.format", "an object with type");
  const type = format.type;
  if (!(ASR_FORMATS as readonly unknown[]).includes(type)) {
    throw badParam("audio.input.format.type", `must be one of ${ASR_FORMATS.join(", ")}`);
  }
  let pcm: PcmFormat | undefined;
  if (type === "pcm") {
    const missing = ["rate", "bits", "channel"].filter((k) => format[k] === undefined || format[k] === null);
    if (missing.length > 0) {
      throw badParam(
        `audio.input.format.${missing[0]}`,
        `${missing.map((m) => `audio.input.format.${m}`).join(", ")} required for pcm audio`,
        "missing_required_parameter",
      );
    }
    pcm = {
      rate: positiveInt(format.rate, "audio.input.format.rate"),
      bits: positiveInt(format.bits, "audio.input.format.bits"),
      channel: positiveInt(format.channel, "audio.input.format.channel"),
    };
    if (pcm.bits !== 16)
      throw badParam("audio.input.format.bits", "only 16-bit pcm (pcm_s16le) is supported");
    if (pcm.rate < 4000 || pcm.rate > 192000)
      throw badParam("audio.input.format.rate", "must be 4000 to 192000");
    if (pcm.channel > 8) throw badParam("audio.input.format.channel", "at most 8 channels");
    if (format.codec !== undefined && format.codec !== "pcm_s16le") {
      throw badParam("audio.input.format.codec", "only pcm_s16le is supported for pcm");
    }
  }
  const tr = input.transcription ?? {};
  if (!isObject(tr)) throw badParam("audio.input.transcription", "must be an object");
  const model = tr.model ?? "svcaudio-2.5-asr";
  if (!(ASR_MODELS as readonly unknown[]).includes(model)) {
    throw badParam("audio.input.transcription.model", `must be one of ${ASR_MODELS.join(", ")}`);
  }
  const lang = tr.language ?? "en";
  if (typeof lang !== "string" || !/^(en|zh)([-_][A-Za-z]+)?$/i.test(lang)) {
    throw badParam("audio.input.transcription.language", "supported languages: zh, en");
  }
  const hot = tr.hotwords ?? [];
  if (!Array.isArray(hot) || hot.some((h) => typeof h !== "string")) {
    throw badParam("audio.input.transcription.hotwords", "must be an array of strings");
  }
  // full_rerun_on_commit is no longer supported and silently ignored, wherever it is sent.
  return {
    type: type as AsrJob["type"],
    ...(pcm ? { pcm } : {}),
    language: lang.toLowerCase().startsWith("zh") ? "zh" : "en",
    hotwords: hot as string[],
    itn: optBool(tr.enable_itn, "audio.input.transcription.enable_itn", true),
    timestamps: optBool(tr.enable_timestamp, "audio.input.transcription.enable_timestamp", false),
  };
}

function speaks(asr: AsrEngine, language: string): boolean {
  return (asr.languages ?? ["en"]).includes(language);
}

/** Recognition started on a streamed body's audio before the body ended. */
interface EarlyRecognition {
  stream: AsrStreamSession;
  /** Samples pushed so far (at the engine's rate). */
  samples: number;
  /** Whether the whole body asks for what the head promised (it can only add to it). */
  matches(job: AsrJob): boolean;
  finish(): Promise<RecognizedWord[]>;
}

/**
 * Starts recognizing a streamed body's audio as soon as its head (everything before audio.data)
 * says how: English pcm. Anything else (another format, a head that does not validate) waits
 * for the whole body and takes the ordinary path, which reports any error.
 */
async function startEarly(
  reader: AsrBodyReader,
  engines: SpeechEnginesHandle,
): Promise<EarlyRecognition | undefined> {
  const head = await reader.head;
  if (head === undefined) return undefined;
  let params: Omit<AsrJob, "audio">;
  try {
    params = parseAsrParams(head);
  } catch {
    return undefined;
  }
  if (params.type !== "pcm" || !params.pcm) return undefined;
  const { asr } = await engines.get();
  if (!speaks(asr, params.language)) return undefined;
  const stream = asr.openStream({
    hotwords: params.hotwords,
    language: params.language,
    timestamps: params.timestamps,
  });
  const decoder = new PcmChunkDecoder(params.pcm, asr.sampleRate);
  const early: EarlyRecognition = {
    stream,
    samples: 0,
    matches: (job) => JSON.stringify({ ...job, audio: undefined }) === JSON.stringify(params),
    finish: () => {
      const tail = decoder.flush();
      early.samples += tail.length;
      stream.push(tail);
      return stream.finish();
    },
  };
  reader.onAudio((bytes) => {
    const pcm = decoder.push(bytes);
    early.samples += pcm.length;
    stream.push(pcm);
  });
  return early;
}

export const asrRoute: ServiceRoute = async (app, { ctx }) => {
  const engines = acquireSpeechEngines(ctx);
  app.addHook("onClose", engines.release);

  // E6 bodies are read as they arrive (AsrBodyReader): audio.data comes out as bytes, and a
  // chunked body, which may be audio still being captured, is recognized as it comes. A body of
  // known length is complete when sent, so it is recognized in one go once read.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", (_request, payload, done) => {
    done(null, new AsrBodyReader(payload, BODY_LIMIT));
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const reader = request.body as AsrBodyReader;
    // asr503 is played the moment the request arrives, while its body may still be streaming (the
    // bridge uploads as the caller speaks): an overloaded hosted service refuses at its front door,
    // before it reads or queues any audio, not after a recognition it never ran. The client sees
    // the refusal at once and the rest of the body is read and dropped.
    const faults = ctx.conditions.faults;
    if (faults.meets("asr503")) {
      const refusal = overloaded("speech recognition");
      reader.drop(refusal);
      faults.played("asr503", request.log);
      return reply.code(503).send(refusal.toBody());
    }
    const chunked = request.headers["content-length"] === undefined;
    let early = chunked ? await startEarly(reader, engines) : undefined;
    let job: AsrJob;
    let uploadEnd: number;
    try {
      const end = await reader.done;
      uploadEnd = performance.now();
      job = parseAsrBody(end.body, end.audio);
    } catch (err) {
      early?.stream.abort();
      throw err;
    }
    if (early && !early.matches(job)) {
      early.stream.abort();
      early = undefined;
    }
    const sessionId = `sess_${randomBytes(12).toString("hex")}`;
    const itemId = `item_${randomBytes(12).toString("hex")}`;
    const meta = () => ({ session_id: sessionId, timestamp: Date.now() });
    // A hosted service's transcript comes asr ms after the upload's end at the soonest: nothing of
    // it (deltas, done or error) leaves before.
    const sse = new SseWriter(reply, { notBefore: ctx.conditions.latency.after("asr", uploadEnd) });
    try {
      const { asr } = await engines.get();
      if (!speaks(asr, job.language)) {
        throw new AudioInputError(
          `language ${job.language} is not available on the local service: its recognizer (PocketSphinx en-us) only does English`,
        );
      }
      // An upstream's text is final already (cased, punctuated, normalized): no ITN over it.
      const itn = job.itn && !asr.verbatim;
      const builder = new TranscriptBuilder(itn);
      let first = true;
      const onWords = (ws: RecognizedWord[], final: boolean) => {
        for (const p of builder.add(ws, final)) {
          const ev: Record<string, unknown> = {
            type: "transcript.text.delta",
            meta: meta(),
            delta: first ? p.text : ` ${p.text}`,
            item_id: itemId,
            content_index: 0,
          };
          if (job.timestamps) {
            ev.start_time = p.startMs;
            ev.end_time = p.endMs;
          }
          first = false;
          void sse.write(sseData(ev));
        }
      };
      let words: RecognizedWord[];
      let seconds: number;
      if (early) {
        sse.signal.addEventListener("abort", () => early?.stream.abort(), { once: true });
        words = await early.finish();
        onWords(words, true);
        seconds = early.samples / asr.sampleRate;
      } else {
        const pcm = await decodeAsrAudio(job.audio, job.type, job.pcm, asr.sampleRate);
        words = await asr.recognize(pcm, {
          hotwords: job.hotwords,
          language: job.language,
          timestamps: job.timestamps,
          signal: sse.signal,
          onWords,
        });
        seconds = pcm.length / asr.sampleRate;
      }
      const text = transcriptText(words, itn);
      const audioTokens = Math.ceil(seconds * AUDIO_TOKENS_PER_SECOND);
      const textTokens = job.hotwords.reduce((n, h) => n + countTokens(h), 0);
      const output = countTokens(text);
      await sse.write(
        sseData({
          type: "transcript.text.done",
          meta: meta(),
          item_id: itemId,
          content_index: 0,
          text,
          usage: {
            type: "realtime_asr",
            input_tokens: audioTokens + textTokens,
            input_token_details: { text_tokens: textTokens, audio_tokens: audioTokens },
            output_tokens: output,
            total_tokens: audioTokens + textTokens + output,
          },
        }),
      );
    } catch (err) {
      if (!sse.signal.aborted) {
        if (!(err instanceof AudioInputError)) request.log.error({ err }, "recognition failed");
        await sse.write(sseData({ type: "error", meta: meta(), message: (err as Error).message }));
      }
    }
    sse.end();
    return reply;
  };

  for (const prefix of [API_PREFIX, PLAN_PREFIX]) {
    app.post(`${prefix}${PATHS.asrSse}`, { bodyLimit: BODY_LIMIT }, handler);
  }
};
