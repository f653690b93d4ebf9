// E4 POST /v1/audio/speech (and /svc_plan/v1/audio/speech): text to one audio file, as binary, as
// SSE chunks (stream_format=sse), or as a URL valid for 12 hours (return_url).
import { performance } from "node:perf_hooks";
import type { FastifyReply, FastifyRequest } from "fastify";
import { concatPcm } from "../../../codecs/pcm.ts";
import { LIMITS } from "../../api/types/limits.ts";
import { API_PREFIX, PATHS, PLAN_PREFIX } from "../../api/types/paths.ts";
import { SPEECH_STREAM_FORMATS, TTS_HTTP_FORMATS } from "../../api/types/speech.ts";
import type { ServiceRoute } from "../context.ts";
import { badParam, missingParam, notFound } from "../errors.ts";
import { acquireSpeechEngines, clonedVoicesOf } from "../speech/engines.ts";
import { CONTENT_TYPES, encodeFile, FILE_EXTENSIONS, type FileFormat } from "../speech/formats.ts";
import { checkModel, E4_FIELDS, ParamError, parseSynthesisParams, spokenText } from "../speech/params.ts";
import { renderSpeech } from "../speech/render.ts";
import { SpeechUrlStore } from "../speech/url-store.ts";
import { SseWriter, sseData } from "../sse-writer.ts";

/** SSE chunk size of the raw audio (before Base64). */
const SSE_CHUNK_BYTES = 16 * 1024;

export const speechRoute: ServiceRoute = async (app, { ctx }) => {
  const engines = acquireSpeechEngines(ctx);
  const urls = new SpeechUrlStore(ctx.dataDir);
  app.addHook("onClose", async () => {
    urls.close();
    await engines.release();
  });

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const startedAt = performance.now();
    const body = request.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badParam("body", "must be a JSON object");
    }
    const b = body as Record<string, unknown>;
    let params: ReturnType<typeof parseSynthesisParams>;
    let format: FileFormat;
    try {
      const model = checkModel(b.model);
      if (b.input === undefined || b.input === null) throw missingParam("input", "the text to speak");
      if (typeof b.input !== "string") throw badParam("input", "must be a string");
      if (b.input.trim() === "") throw badParam("input", "must not be empty");
      if ([...b.input].length > LIMITS.speechInputMaxChars) {
        throw badParam(
          "input",
          `at most ${LIMITS.speechInputMaxChars} characters, got ${[...b.input].length}`,
        );
      }
      params = parseSynthesisParams(b, model, E4_FIELDS, request.account, clonedVoicesOf(ctx));
      format = (b.response_format ?? "mp3") as FileFormat;
      if (!(TTS_HTTP_FORMATS as readonly unknown[]).includes(format)) {
        throw badParam("response_format", `must be one of ${TTS_HTTP_FORMATS.join(", ")}`);
      }
      const sf = b.stream_format ?? "audio";
      if (!(SPEECH_STREAM_FORMATS as readonly unknown[]).includes(sf)) {
        throw badParam("stream_format", `must be one of ${SPEECH_STREAM_FORMATS.join(", ")}`);
      }
      if (b.return_url !== undefined && typeof b.return_url !== "boolean") {
        throw badParam("return_url", "must be a boolean");
      }
      if (b.return_url === true && sf === "sse") {
        throw badParam("return_url", "is for non-streaming requests only (stream_format audio)");
      }
    } catch (err) {
      if (err instanceof ParamError) throw badParam(err.param, err.message.slice(err.param.length + 2));
      throw err;
    }
    const text = spokenText(b.input as string, params);
    const { tts } = await engines.get();
    // A caller that goes away cancels the synthesis (an upstream request stops there too).
    const gone = new AbortController();
    reply.raw.on("close", () => {
      if (!reply.raw.writableFinished) gone.abort(new Error("the client went away"));
    });
    const render = async () => {
      const parts: Int16Array[] = [];
      await renderSpeech(tts, text, params, (pcm) => parts.push(pcm), gone.signal);
      return encodeFile(concatPcm(parts), params.sampleRate, format);
    };

    // A hosted service's first byte comes tts ms after the request at the soonest.
    const firstByte = ctx.conditions.latency.after("tts", startedAt);
    if (b.stream_format === "sse") {
      const sse = new SseWriter(reply, { notBefore: firstByte });
      try {
        const audio = await render();
        for (let at = 0; at < audio.length && !sse.closed; at += SSE_CHUNK_BYTES) {
          const chunk = Buffer.from(audio.subarray(at, at + SSE_CHUNK_BYTES)).toString("base64");
          await sse.write(sseData({ type: "speech.audio.delta", audio: chunk }));
        }
        await sse.write(sseData({ type: "speech.audio.done", audio: "" }));
      } catch (err) {
        request.log.error({ err }, "speech synthesis failed");
        await sse.write(sseData({ type: "speech.audio.error", message: (err as Error).message }));
      }
      sse.end(sseData("[DONE]"));
      return reply;
    }

    const audio = await render();
    await firstByte;
    if (b.return_url === true) {
      const name = await urls.put(audio, FILE_EXTENSIONS[format]);
      const prefix = request.url.startsWith(PLAN_PREFIX) ? PLAN_PREFIX : API_PREFIX;
      const host = request.headers.host ?? "127.0.0.1";
      const expiresAt = Math.floor(Date.now() / 1000) + LIMITS.audioUrlValiditySeconds;
      return reply.send({
        url: `${request.protocol}://${host}${prefix}${PATHS.speech}/files/${name}`,
        expires_at: expiresAt,
      });
    }
    return reply.header("content-type", CONTENT_TYPES[format]).send(Buffer.from(audio));
  };

  const serveFile = async (request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => {
    const bytes = await urls.get(request.params.name);
    if (!bytes) throw notFound("audio URL unknown or expired (audio URLs are valid for 12 hours)");
    const ext = request.params.name.split(".").pop() as FileFormat;
    return reply.header("content-type", CONTENT_TYPES[ext]).send(Buffer.from(bytes));
  };

  for (const prefix of [API_PREFIX, PLAN_PREFIX]) {
    app.post(`${prefix}${PATHS.speech}`, handler);
    app.get(`${prefix}${PATHS.speech}/files/:name`, serveFile);
  }
};
