// E1 chat completions: request, completion, stream chunk.
import type { Open, OpenString } from "./common.ts";

/** Chat model names seen in the spec (all three chat formats serve them). */
export const CHAT_MODELS = ["svc-3.7-flash", "svc-3.5-flash", "svc-3.5-flash-2603"] as const;
export type ChatModel = OpenString<(typeof CHAT_MODELS)[number]>;

export const REASONING_FORMATS = ["general", "deepseek-style"] as const;
export type ReasoningFormat = (typeof REASONING_FORMATS)[number];

export const REASONING_EFFORTS = ["low", "medium", "high"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Models that accept only part of REASONING_EFFORTS. */
export const REASONING_EFFORTS_BY_MODEL: Readonly<Record<string, readonly ReasoningEffort[]>> = {
  "svc-3.5-flash-2603": ["low", "high"],
};

export const IMAGE_DETAILS = ["low", "high"] as const;
export type ImageDetail = (typeof IMAGE_DETAILS)[number];

/** Image formats accepted in `image_url` parts (data URL `<fmt>` values). */
export const CHAT_IMAGE_FORMATS = ["jpg", "jpeg", "png", "webp", "gif"] as const;
/** Audio formats accepted in `input_audio` parts. */
export const CHAT_AUDIO_FORMATS = ["mp3", "wav"] as const;
/** Containers accepted in `video_url` parts. */
export const CHAT_VIDEO_FORMATS = ["mp4", "mov", "mkv"] as const;

/** Scheme of a stored-file reference usable as a part URL. */
export const FILE_REF_SCHEME = "svcfile://";

export const TOOL_PARAM_TYPES = ["string", "number", "integer", "object", "array", "boolean"] as const;
export type ToolParamType = (typeof TOOL_PARAM_TYPES)[number];

export const CHAT_RESPONSE_FORMATS = ["text", "json_object"] as const;

// ---- request ----

export interface TextPart {
  type: "text";
  text: string;
}

export interface ImageUrlPart {
  type: "image_url";
  /** url: http(s) URL, `data:image/<fmt>;base64,…`, or `svcfile://<file_id>`. */
  image_url: { url: string; detail?: ImageDetail };
}

export interface VideoUrlPart {
  type: "video_url";
  /** url: http(s) URL, Base64 data URL or `svcfile://<file_id>`; MP4 (also mov, mkv), under 128 MB. */
  video_url: { url: string };
}

export interface InputAudioPart {
  type: "input_audio";
  /** data: `data:audio/<mp3|wav>;base64,…`. */
  input_audio: { data: string };
}

export type UserContentPart = TextPart | ImageUrlPart | VideoUrlPart | InputAudioPart;

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string | UserContentPart[];
}

export interface AssistantMessage {
  role: "assistant";
  content: string | null;
  /**
   * Not in the spec's message table, but implied by `tool` messages answering "the call returned by
   * the assistant in the previous turn": the assistant turn that made the calls carries them.
   */
  tool_calls?: ToolCall[];
}

export interface ToolMessage {
  role: "tool";
  content: string;
  tool_call_id: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export type ToolParameterSchema = Open<{
  type: ToolParamType;
  description?: string;
}>;

export interface ChatTool {
  type: "function";
  function: {
    /** Letters, digits, `_` and `-`; under 64 characters recommended. */
    name: string;
    description: string;
    parameters: Open<{
      type: "object";
      properties: Record<string, ToolParameterSchema>;
    }>;
  };
}

export interface ChatCompletionRequest {
  model: ChatModel;
  messages: ChatMessage[];
  tools?: ChatTool[];
  max_tokens?: number;
  /** 0.0 to 2.0, default 0.5. */
  temperature?: number;
  /** Default 0.9. */
  top_p?: number;
  /** Default 1, at most 5 suggested. */
  n?: number;
  stream?: boolean;
  stop?: string | string[];
  /** 0.0 to 1.0, default 0. */
  frequency_penalty?: number;
  response_format?: { type: (typeof CHAT_RESPONSE_FORMATS)[number] };
  reasoning_format?: ReasoningFormat;
  reasoning_effort?: ReasoningEffort;
}

// ---- response ----

export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** The spec shows only `stop`; other values pass through. */
export type ChatFinishReason = OpenString<"stop">;

export interface ChatUsage {
  prompt_tokens: number;
  cached_tokens?: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletionMessage {
  role: "assistant";
  content: string;
  /** Reasoning text (reasoning models, `reasoning_format=general`). */
  reasoning?: string;
  /** Reasoning text with `reasoning_format=deepseek-style`. */
  reasoning_content?: string;
  tool_calls?: ToolCall[];
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  finish_reason: ChatFinishReason;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  model: string;
  created: number;
  choices: ChatCompletionChoice[];
  usage: ChatUsage;
}

// ---- stream ----

/**
 * A tool call fragment inside a chunk: "same element shape" as ToolCall, but a fragment may carry
 * only part of it (usually `function.arguments`). `index` (OpenAI convention) identifies which call
 * a fragment continues; without it the fragment continues the call with the same id, or the last one.
 */
export interface ToolCallDelta {
  index?: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

export interface ChatDelta {
  /** `assistant`, or an empty string. */
  role?: "assistant" | "";
  content?: string;
  reasoning?: string;
  reasoning_content?: string;
  tool_calls?: ToolCallDelta[];
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatDelta;
  /** Empty string on intermediate chunks, `stop` on the last content chunk. */
  finish_reason: ChatFinishReason | "" | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  /** Cumulative counts. */
  usage?: ChatUsage;
}

/** The data line that ends a chat (and E4 SSE) stream. */
export const SSE_DONE = "[DONE]";
