// The canonical generation-event model: what every chat engine emits and what the three wire
// renderers (chat completions, messages, responses) consume. Blocks are strictly sequential: at
// most one is open at a time, and each has exactly one start and one stop.

export type FinishReason = "stop" | "tool_calls" | "length";

export type BlockStart =
  | { type: "block_start"; block: number; kind: "text" }
  | { type: "block_start"; block: number; kind: "reasoning" }
  | { type: "block_start"; block: number; kind: "tool_call"; callId: string; name: string };

export interface Delta {
  type: "delta";
  block: number;
  /** Text, reasoning text, or a fragment of a tool call's JSON arguments. */
  text: string;
  /** BPE tokens of `text`, filled in by the generation pipeline (engines leave it out). */
  tokens?: number;
}

export interface BlockStop {
  type: "block_stop";
  block: number;
}

export interface Usage {
  inputTokens: number;
  /** All generated tokens, reasoning included. */
  outputTokens: number;
  /** The part of outputTokens spent in reasoning blocks. */
  reasoningTokens: number;
}

export interface UsageEvent {
  type: "usage";
  usage: Usage;
}

export interface Finish {
  type: "finish";
  reason: FinishReason;
  /** The stop sequence that ended generation, when one did. */
  stopSequence?: string;
}

/** Generation failed after it started; renderers turn it into their format's in-band error. */
export interface GenError {
  type: "error";
  message: string;
  code?: string;
}

export type GenEvent = BlockStart | Delta | BlockStop | UsageEvent | Finish | GenError;

/** Events that happened at the same instant; renderers may merge them into one wire chunk. */
export type GenBatch = readonly GenEvent[];

export type BlockKind = BlockStart["kind"];
