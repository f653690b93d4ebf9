// E3 responses (OpenAI-Responses-compatible shape): request, response object, stream events.
// Input items, function tool definitions, and `reasoning`/`text` request shapes beyond the echoed
// fields are not shown by the spec: typed open.
import type { ReasoningEffort } from "./chat.ts";
import type { Open, OpenString } from "./common.ts";

/** The only model E3 supports. */
export const RESPONSES_MODELS = ["svc-3.7-flash"] as const;

export const RESPONSE_STATUSES = ["in_progress", "completed", "incomplete", "failed"] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

export type OutputItemStatus = OpenString<"in_progress" | "completed" | "incomplete">;

/** One input item (message or event); shape not shown. */
export type ResponsesInputItem = Open<{ type?: string; role?: string; content?: unknown }>;

/** Only function tools are accepted; shape beyond `type` not shown. */
export type ResponsesFunctionTool = Open<{ type: "function"; name?: string }>;

export type ResponsesReasoningConfig = Open<{ effort?: ReasoningEffort | null; summary?: string | null }>;

export type ResponsesTextConfig = Open<{ format?: Open<{ type: string }> }>;

export interface ResponsesRequest {
  /** Only `svc-3.7-flash`. */
  model: OpenString<(typeof RESPONSES_MODELS)[number]>;
  input: string | ResponsesInputItem[];
  instructions?: string;
  stream?: boolean;
  /** 0.0 to 2.0. */
  temperature?: number;
  top_p?: number;
  /** Caps reasoning plus final output. */
  max_output_tokens?: number;
  reasoning?: ResponsesReasoningConfig;
  tools?: ResponsesFunctionTool[];
  /** Only the string `auto` is supported. */
  tool_choice?: "auto" | Record<string, unknown>;
  text?: ResponsesTextConfig;
}

// ---- output items ----

export type ReasoningSummaryPart = Open<{ type: string; text?: string }>;
export type ReasoningContentPart = Open<{ type: string; text?: string }>;

export interface ReasoningItem {
  type: "reasoning";
  /** Prefix `rs_`. */
  id: string;
  summary: ReasoningSummaryPart[];
  content: ReasoningContentPart[] | null;
  encrypted_content: null;
  status?: OutputItemStatus;
}

export interface OutputTextPart {
  type: "output_text";
  text: string;
  annotations: unknown[];
}

export interface MessageItem {
  type: "message";
  /** Prefix `msg_`. */
  id: string;
  status: OutputItemStatus;
  role: "assistant";
  content: OutputTextPart[];
}

export interface FunctionCallItem {
  type: "function_call";
  /** Prefix `fc_`. */
  id: string;
  call_id: string;
  name: string;
  /** JSON string. */
  arguments: string;
  status: OutputItemStatus;
}

export type OutputItem = ReasoningItem | MessageItem | FunctionCallItem;

// ---- response object ----

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number; tool_output_tokens: number };
  total_tokens: number;
}

/** Filled when status is `failed`; shape not shown. */
export type ResponseError = Open<{ code?: string | null; message?: string }>;

export type IncompleteDetails = Open<{ reason: OpenString<"max_output_tokens"> }>;

export interface ResponseObject {
  /** Form `resp_<id>`. */
  id: string;
  object: "response";
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  error: ResponseError | null;
  incomplete_details: IncompleteDetails | null;
  model: string;
  output: OutputItem[];
  /** Absent or null while in progress. */
  usage?: ResponsesUsage | null;
  // Echoes of the request (null where the request omitted them).
  instructions: string | null;
  max_output_tokens: number | null;
  reasoning: { effort: ReasoningEffort | null; summary: string | null };
  temperature: number | null;
  top_p: number | null;
  /** `{format: {type: "text"}}` by default. */
  text: ResponsesTextConfig;
  /** `auto` by default. */
  tool_choice: "auto" | Record<string, unknown>;
  tools: ResponsesFunctionTool[];
}

// ---- stream events (event name === data.type; sequence_number from 0, +1 per event) ----

interface Seq {
  sequence_number: number;
}

export interface ResponseCreatedEvent extends Seq {
  type: "response.created";
  response: ResponseObject;
}
export interface ResponseInProgressEvent extends Seq {
  type: "response.in_progress";
  response: ResponseObject;
}
export interface OutputItemAddedEvent extends Seq {
  type: "response.output_item.added";
  output_index: number;
  item: OutputItem;
}
export interface ReasoningPartAddedEvent extends Seq {
  type: "response.reasoning_part.added";
  output_index: number;
  item_id: string;
  content_index: number;
  part: ReasoningContentPart;
}
export interface ReasoningTextDeltaEvent extends Seq {
  type: "response.reasoning_text.delta";
  output_index: number;
  item_id: string;
  content_index: number;
  delta: string;
}
export interface ReasoningTextDoneEvent extends Seq {
  type: "response.reasoning_text.done";
  output_index: number;
  item_id: string;
  content_index: number;
  text: string;
}
export interface ReasoningPartDoneEvent extends Seq {
  type: "response.reasoning_part.done";
  output_index?: number;
  item_id?: string;
  content_index?: number;
  part: ReasoningContentPart;
}
export interface ContentPartAddedEvent extends Seq {
  type: "response.content_part.added";
  item_id: string;
  output_index: number;
  content_index: number;
  part: OutputTextPart;
}
export interface OutputTextDeltaEvent extends Seq {
  type: "response.output_text.delta";
  item_id: string;
  output_index: number;
  content_index: number;
  delta: string;
}
export interface OutputTextDoneEvent extends Seq {
  type: "response.output_text.done";
  item_id: string;
  output_index: number;
  content_index: number;
  text: string;
}
export interface ContentPartDoneEvent extends Seq {
  type: "response.content_part.done";
  item_id?: string;
  output_index?: number;
  content_index?: number;
  part: OutputTextPart;
}
export interface FunctionCallArgumentsDeltaEvent extends Seq {
  type: "response.function_call_arguments.delta";
  item_id: string;
  output_index: number;
  delta: string;
}
export interface FunctionCallArgumentsDoneEvent extends Seq {
  type: "response.function_call_arguments.done";
  item_id: string;
  output_index: number;
  arguments: string;
  name: string;
}
export interface OutputItemDoneEvent extends Seq {
  type: "response.output_item.done";
  output_index: number;
  item: OutputItem;
}
export interface ResponseCompletedEvent extends Seq {
  type: "response.completed";
  response: ResponseObject;
}
/** Extra fields not shown by the spec; the OpenAI shape carries `response`. */
export type ResponseIncompleteEvent = Open<Seq & { type: "response.incomplete"; response?: ResponseObject }>;
export type ResponseFailedEvent = Open<Seq & { type: "response.failed"; response?: ResponseObject }>;
/** Transport-layer error; extra fields not shown. */
export type ResponsesErrorEvent = Open<
  Seq & { type: "error"; message?: string; code?: string | null; param?: string | null }
>;

export type ResponsesStreamEvent =
  | ResponseCreatedEvent
  | ResponseInProgressEvent
  | OutputItemAddedEvent
  | ReasoningPartAddedEvent
  | ReasoningTextDeltaEvent
  | ReasoningTextDoneEvent
  | ReasoningPartDoneEvent
  | ContentPartAddedEvent
  | OutputTextDeltaEvent
  | OutputTextDoneEvent
  | ContentPartDoneEvent
  | FunctionCallArgumentsDeltaEvent
  | FunctionCallArgumentsDoneEvent
  | OutputItemDoneEvent
  | ResponseCompletedEvent
  | ResponseIncompleteEvent
  | ResponseFailedEvent
  | ResponsesErrorEvent;

export type ResponsesStreamEventType = ResponsesStreamEvent["type"];
