// Non-streaming answers: a whole generation folded into one result, which each format then
// shapes into its response object.
import type { FinishReason, GenBatch, Usage } from "./events.ts";

export type ResultBlock =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string }
  | { kind: "tool_call"; callId: string; name: string; arguments: string };

export interface GenResult {
  blocks: ResultBlock[];
  finish: FinishReason;
  stopSequence?: string;
  usage: Usage;
  /** Set when generation failed after it started. */
  error?: { message: string; code?: string };
}

export async function collect(batches: AsyncIterable<GenBatch>, inputTokens: number): Promise<GenResult> {
  const result: GenResult = {
    blocks: [],
    finish: "stop",
    usage: { inputTokens, outputTokens: 0, reasoningTokens: 0 },
  };
  const byIndex = new Map<number, ResultBlock>();
  for await (const batch of batches) {
    for (const ev of batch) {
      switch (ev.type) {
        case "block_start": {
          const block: ResultBlock =
            ev.kind === "tool_call"
              ? { kind: "tool_call", callId: ev.callId, name: ev.name, arguments: "" }
              : { kind: ev.kind, text: "" };
          byIndex.set(ev.block, block);
          result.blocks.push(block);
          break;
        }
        case "delta": {
          const block = byIndex.get(ev.block);
          if (block?.kind === "tool_call") block.arguments += ev.text;
          else if (block) block.text += ev.text;
          break;
        }
        case "usage":
          result.usage = { ...ev.usage };
          break;
        case "finish":
          result.finish = ev.reason;
          if (ev.stopSequence !== undefined) result.stopSequence = ev.stopSequence;
          break;
        case "error":
          result.error =
            ev.code === undefined ? { message: ev.message } : { message: ev.message, code: ev.code };
          break;
        case "block_stop":
          break;
      }
    }
  }
  return result;
}

/** Concatenated text of the result's text blocks. */
export function resultText(r: GenResult): string {
  return r.blocks.map((b) => (b.kind === "text" ? b.text : "")).join("");
}

export function resultReasoning(r: GenResult): string {
  return r.blocks.map((b) => (b.kind === "reasoning" ? b.text : "")).join("");
}
