// Documented limits, checked before anything is sent, so a bad call fails fast with an error that
// names the field and the allowed range instead of a round trip and an opaque 400.
import { SvcValidationError } from "./errors.ts";
import type { AsrFormat } from "./types/asr.ts";
import { ASR_FORMATS } from "./types/asr.ts";
import type { ChatCompletionRequest } from "./types/chat.ts";
import {
  IMAGE_DETAILS,
  REASONING_EFFORTS,
  REASONING_EFFORTS_BY_MODEL,
  REASONING_FORMATS,
} from "./types/chat.ts";
import type { ImageEditFields, ImageGenerationRequest } from "./types/images.ts";
import { IMAGE_RESPONSE_FORMATS, IMAGE_SIZES } from "./types/images.ts";
import { LIMITS, type Range, TOOL_NAME_PATTERN } from "./types/limits.ts";
import type { MessagesRequest } from "./types/messages.ts";
import { MESSAGES_REQUEST_FIELDS } from "./types/messages.ts";
import type { ResponsesRequest } from "./types/responses.ts";
import type { SpeechRequest, VoiceLabel } from "./types/speech.ts";
import {
  SPEECH_STREAM_FORMATS,
  TTS_HTTP_FORMATS,
  TTS_INSTRUCTION_MODEL,
  TTS_SAMPLE_RATES,
} from "./types/speech.ts";
import type { TtsCreateData } from "./types/tts-ws.ts";
import { TTS_MODES, TTS_WS_FORMATS } from "./types/tts-ws.ts";
import type { VoiceListParams } from "./types/voices.ts";
import { VOICE_LIST_ORDERS } from "./types/voices.ts";

// ---- primitives ----

export function checkRange(
  field: string,
  v: number | undefined,
  r: Range,
  opts: { integer?: boolean; exclusiveMin?: boolean } = {},
): void {
  if (v === undefined) return;
  const kind = opts.integer ? "an integer" : "a number";
  const lo = opts.exclusiveMin ? `greater than ${r.min}` : `from ${r.min}`;
  const allowed = `${kind} ${lo} to ${r.max}`;
  if (typeof v !== "number" || Number.isNaN(v)) throw new SvcValidationError(field, allowed, v);
  if (opts.integer && !Number.isInteger(v)) throw new SvcValidationError(field, allowed, v);
  if ((opts.exclusiveMin ? v <= r.min : v < r.min) || v > r.max)
    throw new SvcValidationError(field, allowed, v);
}

export function checkMaxChars(field: string, v: string | undefined, max: number): void {
  if (v === undefined) return;
  if (typeof v !== "string") throw new SvcValidationError(field, `a string of at most ${max} characters`, v);
  // Characters as the user sees them (code points), not UTF-16 units.
  const n = [...v].length;
  if (n > max) throw new SvcValidationError(field, `at most ${max} characters`, v);
}

export function checkOneOf<T>(field: string, v: T | undefined, allowed: readonly T[]): void {
  if (v === undefined) return;
  if (!allowed.includes(v)) throw new SvcValidationError(field, `one of ${allowed.join(", ")}`, v);
}

function checkRequired(field: string, v: unknown): void {
  if (v === undefined || v === null || v === "") throw new SvcValidationError(field, "present", v);
}

// ---- per endpoint ----

export function validateChatRequest(r: ChatCompletionRequest): void {
  checkRequired("model", r.model);
  if (!Array.isArray(r.messages) || r.messages.length === 0)
    throw new SvcValidationError("messages", "a non-empty array", r.messages);
  checkRange("temperature", r.temperature, LIMITS.temperature);
  checkRange("top_p", r.top_p, { min: 0, max: 1 });
  checkRange("frequency_penalty", r.frequency_penalty, LIMITS.frequencyPenalty);
  checkRange("n", r.n, { min: 1, max: Number.MAX_SAFE_INTEGER }, { integer: true });
  checkRange("max_tokens", r.max_tokens, { min: 1, max: Number.MAX_SAFE_INTEGER }, { integer: true });
  checkOneOf("reasoning_format", r.reasoning_format, REASONING_FORMATS);
  checkOneOf(
    "reasoning_effort",
    r.reasoning_effort,
    REASONING_EFFORTS_BY_MODEL[r.model] ?? REASONING_EFFORTS,
  );
  checkOneOf("response_format.type", r.response_format?.type, ["text", "json_object"] as const);
  r.tools?.forEach((t, i) => {
    const name = t.function?.name;
    if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name))
      throw new SvcValidationError(`tools[${i}].function.name`, "letters, digits, _ and - only", name);
  });
  r.messages.forEach((m, i) => {
    if (m.role !== "user" || typeof m.content === "string") return;
    m.content.forEach((p, j) => {
      if (p.type === "image_url")
        checkOneOf(`messages[${i}].content[${j}].image_url.detail`, p.image_url.detail, IMAGE_DETAILS);
      if (p.type === "video_url" && p.video_url.url.startsWith("data:")) {
        // Size of the decoded video from its Base64 length.
        const bytes = Math.floor(((p.video_url.url.length - p.video_url.url.indexOf(",") - 1) * 3) / 4);
        if (bytes >= LIMITS.videoMaxBytes)
          throw new SvcValidationError(
            `messages[${i}].content[${j}].video_url.url`,
            "a video under 128 MB",
            `${bytes} bytes`,
          );
      }
      if (
        p.type === "input_audio" &&
        !/^data:audio\/(mp3|mpeg|wav|x-wav|wave);base64,/.test(p.input_audio.data)
      )
        throw new SvcValidationError(
          `messages[${i}].content[${j}].input_audio.data`,
          "a data URL data:audio/<mp3|wav>;base64,…",
          p.input_audio.data.slice(0, 30),
        );
    });
  });
}

export function validateMessagesRequest(r: MessagesRequest): void {
  checkRequired("model", r.model);
  for (const k of Object.keys(r))
    if (!(MESSAGES_REQUEST_FIELDS as readonly string[]).includes(k))
      throw new SvcValidationError(
        k,
        `absent: only ${MESSAGES_REQUEST_FIELDS.join(", ")} are supported`,
        "a value",
      );
  if (!Array.isArray(r.messages) || r.messages.length === 0)
    throw new SvcValidationError("messages", "a non-empty array", r.messages);
  checkRange("max_tokens", r.max_tokens, { min: 1, max: Number.MAX_SAFE_INTEGER }, { integer: true });
  if (r.max_tokens === undefined)
    throw new SvcValidationError("max_tokens", "an integer greater than 0", undefined);
  checkRange("temperature", r.temperature, LIMITS.temperature);
  checkRange("top_p", r.top_p, LIMITS.messagesTopP, { exclusiveMin: true });
  checkRange("top_k", r.top_k, LIMITS.topK, { integer: true });
  checkOneOf("output_config.effort", r.output_config?.effort, REASONING_EFFORTS);
}

export function validateResponsesRequest(r: ResponsesRequest): void {
  checkRequired("model", r.model);
  checkRequired("input", r.input);
  checkRange("temperature", r.temperature, LIMITS.temperature);
  checkRange("top_p", r.top_p, { min: 0, max: 1 });
  checkRange(
    "max_output_tokens",
    r.max_output_tokens,
    { min: 1, max: Number.MAX_SAFE_INTEGER },
    { integer: true },
  );
  if (r.tool_choice !== undefined && r.tool_choice !== "auto")
    throw new SvcValidationError("tool_choice", 'the string "auto"', JSON.stringify(r.tool_choice));
  r.tools?.forEach((t, i) => {
    if (t.type !== "function") throw new SvcValidationError(`tools[${i}].type`, '"function"', t.type);
  });
}

function validateVoiceOptions(
  model: string,
  prefix: string,
  o: { instruction?: string | undefined; voice_label?: VoiceLabel | undefined },
): void {
  checkMaxChars(`${prefix}instruction`, o.instruction, LIMITS.instructionMaxChars);
  if (o.instruction !== undefined && model !== TTS_INSTRUCTION_MODEL)
    throw new SvcValidationError(
      `${prefix}instruction`,
      `used only with model ${TTS_INSTRUCTION_MODEL}`,
      model,
    );
  if (o.voice_label !== undefined) {
    if (model === TTS_INSTRUCTION_MODEL)
      throw new SvcValidationError(
        `${prefix}voice_label`,
        `absent with model ${TTS_INSTRUCTION_MODEL}`,
        "a label",
      );
    const keys = Object.keys(o.voice_label).filter(
      (k) => (o.voice_label as Record<string, unknown>)[k] !== undefined,
    );
    if (keys.length !== 1)
      throw new SvcValidationError(
        `${prefix}voice_label`,
        "exactly one of language, emotion, style",
        keys.join("+"),
      );
  }
}

export function validateSpeechRequest(r: SpeechRequest): void {
  checkRequired("model", r.model);
  checkRequired("voice", r.voice);
  if (typeof r.input !== "string" || r.input.length === 0)
    throw new SvcValidationError("input", `1 to ${LIMITS.speechInputMaxChars} characters`, r.input);
  checkMaxChars("input", r.input, LIMITS.speechInputMaxChars);
  checkOneOf("response_format", r.response_format, TTS_HTTP_FORMATS);
  checkOneOf("sample_rate", r.sample_rate, TTS_SAMPLE_RATES);
  checkOneOf("stream_format", r.stream_format, SPEECH_STREAM_FORMATS);
  checkRange("speed", r.speed, LIMITS.speed);
  checkRange("volume", r.volume, LIMITS.volume);
  validateVoiceOptions(r.model, "", r);
  if (r.return_url && r.stream_format === "sse")
    throw new SvcValidationError("return_url", "used only without stream_format sse (non-streaming)", true);
}

export function validateTtsCreate(model: string, d: Omit<TtsCreateData, "session_id">): void {
  checkRequired("voice_id", d.voice_id);
  checkOneOf("response_format", d.response_format, TTS_WS_FORMATS);
  checkOneOf("sample_rate", d.sample_rate, TTS_SAMPLE_RATES);
  checkOneOf("mode", d.mode, TTS_MODES);
  checkRange("speed_ratio", d.speed_ratio, LIMITS.speed);
  checkRange("volume_ratio", d.volume_ratio, LIMITS.volume);
  validateVoiceOptions(model, "", d);
}

export function validateAsrFormat(f: AsrFormat): void {
  checkOneOf("audio.input.format.type", f.type, ASR_FORMATS);
  if (f.type === "pcm") {
    for (const k of ["rate", "bits", "channel"] as const) {
      const v = f[k];
      if (v === undefined) throw new SvcValidationError(`audio.input.format.${k}`, "present for pcm", v);
      checkRange(`audio.input.format.${k}`, v, { min: 1, max: 1_000_000 }, { integer: true });
    }
  }
}

function validateImageCommon(r: ImageGenerationRequest | ImageEditFields): void {
  checkRequired("model", r.model);
  if (typeof r.prompt !== "string" || r.prompt.length === 0)
    throw new SvcValidationError("prompt", `1 to ${LIMITS.imagePromptMaxChars} characters`, r.prompt);
  checkMaxChars("prompt", r.prompt, LIMITS.imagePromptMaxChars);
  checkMaxChars("negative_prompt", r.negative_prompt, LIMITS.imagePromptMaxChars);
  checkRange("seed", r.seed, LIMITS.seed, { integer: true });
  checkRange("steps", r.steps, LIMITS.steps, { integer: true });
  checkRange("cfg_scale", r.cfg_scale, LIMITS.cfgScale);
  checkOneOf("response_format", r.response_format, IMAGE_RESPONSE_FORMATS);
}

export function validateImageGeneration(r: ImageGenerationRequest): void {
  validateImageCommon(r);
  checkOneOf("size", r.size, IMAGE_SIZES);
  checkRange("n", r.n, { min: LIMITS.imagesPerRequest, max: LIMITS.imagesPerRequest }, { integer: true });
}

export function validateImageEdit(r: ImageEditFields): void {
  validateImageCommon(r);
}

export function validateVoiceListParams(p: VoiceListParams): void {
  checkRange("limit", p.limit, LIMITS.voicePageSize, { integer: true });
  checkOneOf("order", p.order, VOICE_LIST_ORDERS);
}

export function validateFileSize(field: string, bytes: number): void {
  if (bytes > LIMITS.fileMaxBytes)
    throw new SvcValidationError(field, `at most ${LIMITS.fileMaxBytes} bytes (128 MB)`, `${bytes} bytes`);
}
