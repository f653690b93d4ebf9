// E2 messages (Anthropic-compatible shape): request, message, stream events.
// The spec does not show input message items, content blocks, tools or output_config beyond
// `effort`: those are typed open, with the Anthropic field names where the spec names the block.
import type { ChatModel, ReasoningEffort } from "./chat.ts";
import type { Open } from "./common.ts";

export const MESSAGES_STOP_REASONS = ["end_turn", "tool_use", "max_tokens"] as const;
export type MessagesStopReason = (typeof MESSAGES_STOP_REASONS)[number];

/** The only top-level request fields the service supports; others must not be sent. */
export const MESSAGES_REQUEST_FIELDS = [
  "model",
  "messages",
  "max_tokens",
  "system",
  "tools",
  "output_config",
  "stream",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
] as const;

/** An input content block: shape not shown, open. */
export type MessagesInputBlock = Open<{ type: string }>;

/** An input message item: shape not shown, open. */
export type MessagesInputMessage = Open<{
  role: "user" | "assistant";
  content: string | MessagesInputBlock[];
}>;

export type MessagesSystemBlock = Open<{ type: "text"; text: string }>;

/** A tool definition: shape not shown, open. */
export type MessagesTool = Open<{ name: string }>;

export type MessagesOutputConfig = Open<{ effort?: ReasoningEffort }>;

export interface MessagesRequest {
  model: ChatModel;
  /** At least one. */
  messages: MessagesInputMessage[];
  /** Greater than 0. */
  max_tokens: number;
  system?: string | MessagesSystemBlock[];
  tools?: MessagesTool[];
  output_config?: MessagesOutputConfig;
  stream?: boolean;
  /** 0 to 2. */
  temperature?: number;
  /** Greater than 0, at most 1. */
  top_p?: number;
  /** 0 to 500. */
  top_k?: number;
  stop_sequences?: string[];
}

// ---- message ----

export interface MessagesTextBlock {
  type: "text";
  text: string;
}

/** A tool call block; the fields beyond `type` follow the Anthropic shape (not shown by the spec). */
export type MessagesToolUseBlock = Open<{
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}>;

export type MessagesContentBlock = MessagesTextBlock | MessagesToolUseBlock;

/** At least input_tokens and output_tokens; other counters pass through. */
export type MessagesUsage = Open<{ input_tokens: number; output_tokens: number }>;

export interface MessagesMessage {
  id: string;
  type: "message";
  role: "assistant";
  /** Shown on `message_start`, not in the non-streaming table. */
  model?: string;
  content: MessagesContentBlock[];
  stop_reason: MessagesStopReason;
  usage: MessagesUsage;
}

// ---- stream events (event name === data.type) ----

export interface MessageStartEvent {
  type: "message_start";
  message: Open<{ id: string; type: "message"; role: "assistant"; model: string; usage?: MessagesUsage }>;
}

export interface ContentBlockStartEvent {
  type: "content_block_start";
  index: number;
  content_block: MessagesContentBlock;
}

export type MessagesTextDelta = { type: "text_delta"; text: string };
/** Tool argument fragment; `partial_json` is the Anthropic field name. */
export type MessagesInputJsonDelta = Open<{ type: "input_json_delta"; partial_json: string }>;

export interface ContentBlockDeltaEvent {
  type: "content_block_delta";
  index: number;
  delta: MessagesTextDelta | MessagesInputJsonDelta;
}

export interface ContentBlockStopEvent {
  type: "content_block_stop";
  index: number;
}

export interface MessageDeltaEvent {
  type: "message_delta";
  /** The Anthropic shape carries the stop reason here. */
  delta: Open<{ stop_reason: MessagesStopReason; stop_sequence?: string | null }>;
  /** The spec's event table lists `stop_reason` at the top level of the data; the client reads either. */
  stop_reason?: MessagesStopReason;
  usage: MessagesUsage;
}

export interface MessageStopEvent {
  type: "message_stop";
}

export interface MessagesPingEvent {
  type: "ping";
}

/** In-band error after the stream has begun (Anthropic shape; not in the spec's table). */
export interface MessagesErrorEvent {
  type: "error";
  error: Open<{ type: string; message: string }>;
}

export type MessagesStreamEvent =
  | MessageStartEvent
  | ContentBlockStartEvent
  | ContentBlockDeltaEvent
  | ContentBlockStopEvent
  | MessageDeltaEvent
  | MessageStopEvent
  | MessagesPingEvent
  | MessagesErrorEvent;
