// The canonical generation request: what the three wire formats' parsers produce and what engines
// read. Media parts carry their original URL plus, once resolved, the bytes and what was perceived.
import type { ReasoningEffort } from "../../api/types/index.ts";
import type { ResolvedMedia } from "../media/resolve.ts";

export type MediaKind = "image" | "video" | "audio";

export interface MediaPart {
  type: MediaKind;
  /** As the caller gave it: http(s) URL, data URL, svcfile://<id>, or bare Base64 (audio). */
  url: string;
  /** Request field of the part, for error messages (e.g. `messages[1].content[0].image_url.url`). */
  param: string;
  /** Image detail level (images only). */
  detail?: "low" | "high";
  /** Declared audio format (input_audio `format`), when given. */
  format?: string;
  /** Filled in by the media resolver before the engine runs. */
  resolved?: ResolvedMedia;
}

export type InputPart = { type: "text"; text: string } | MediaPart;

export interface ToolCallRecord {
  id: string;
  name: string;
  /** JSON text. */
  arguments: string;
}

export type ConvMessage =
  | { role: "system"; text: string }
  | { role: "user"; parts: InputPart[] }
  | { role: "assistant"; text: string; toolCalls: ToolCallRecord[] }
  | { role: "tool"; callId: string; content: string };

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

export type OutputFormat =
  | { kind: "text" }
  | { kind: "json"; schema?: Record<string, unknown>; name?: string };

export interface GenRequest {
  /** Public model name (svc-…). */
  model: string;
  messages: ConvMessage[];
  tools: ToolSpec[];
  /** Output token budget (reasoning included); undefined: the engine decides. */
  maxTokens?: number;
  /** Text stops at the first of these; they are not part of the output. */
  stop: string[];
  temperature?: number;
  topP?: number;
  topK?: number;
  frequencyPenalty?: number;
  output: OutputFormat;
  /** Reasoning effort; `emit` asks for visible reasoning text before the answer. */
  reasoning?: { effort: ReasoningEffort; emit: boolean };
}

/** Every media part of the request, in order. */
export function mediaParts(req: GenRequest): MediaPart[] {
  const out: MediaPart[] = [];
  for (const m of req.messages) {
    if (m.role !== "user") continue;
    for (const p of m.parts) if (p.type !== "text") out.push(p);
  }
  return out;
}
