// E1 renderers. Streaming: a small state machine per choice turning canonical batches into
// `data: <chunk>` lines: role on the choice's first chunk, cumulative usage on every chunk,
// finish_reason "" on intermediate chunks and the real reason on the last content chunk (merged
// when the finish arrives with the last delta). Non-streaming: the folded results as one object.
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessage,
  ChatDelta,
  ChatUsage,
  ReasoningFormat,
  ToolCall,
} from "../../../api/types/index.ts";
import { internal } from "../../errors.ts";
import type { GenResult } from "../../generation/collect.ts";
import { resultReasoning, resultText } from "../../generation/collect.ts";
import type { BlockKind, FinishReason, GenBatch } from "../../generation/events.ts";
import { sseData } from "../../sse-writer.ts";

export interface ChatMeta {
  id: string;
  created: number;
  model: string;
  reasoningFormat: ReasoningFormat;
}

const FINISH: Readonly<Record<FinishReason, string>> = {
  stop: "stop",
  tool_calls: "tool_calls",
  length: "length",
};

export class ChatChunkRenderer {
  private readonly meta: ChatMeta;
  private readonly choice: number;
  private readonly promptTokens: number;
  /** Completion tokens of earlier choices (usage is cumulative over the whole response). */
  private readonly offset: number;
  private completion = 0;
  private roleSent = false;
  private open: BlockKind | undefined;
  private toolIndex = -1;
  /** Tokens this choice generated so far. */
  get completionTokens(): number {
    return this.completion;
  }

  constructor(meta: ChatMeta, choice: number, promptTokens: number, offset = 0) {
    this.meta = meta;
    this.choice = choice;
    this.promptTokens = promptTokens;
    this.offset = offset;
  }

  /** The SSE text for one batch (possibly empty). */
  push(batch: GenBatch): string {
    const chunks: ChatCompletionChunk[] = [];
    let out = "";
    for (const ev of batch) {
      switch (ev.type) {
        case "block_start":
          this.open = ev.kind;
          if (ev.kind === "tool_call") {
            this.toolIndex++;
            chunks.push(
              this.chunk({
                tool_calls: [
                  {
                    index: this.toolIndex,
                    id: ev.callId,
                    type: "function",
                    function: { name: ev.name, arguments: "" },
                  },
                ],
              }),
            );
          }
          break;
        case "delta":
          this.completion += ev.tokens ?? 0;
          if (this.open === "text") chunks.push(this.chunk({ content: ev.text }));
          else if (this.open === "reasoning") {
            const key = this.meta.reasoningFormat === "deepseek-style" ? "reasoning_content" : "reasoning";
            chunks.push(this.chunk({ [key]: ev.text }));
          } else if (this.open === "tool_call") {
            chunks.push(
              this.chunk({ tool_calls: [{ index: this.toolIndex, function: { arguments: ev.text } }] }),
            );
          }
          break;
        case "block_stop":
          this.open = undefined;
          break;
        case "usage":
          this.completion = ev.usage.outputTokens;
          break;
        case "finish": {
          const last = chunks[chunks.length - 1];
          if (last) {
            last.choices[0]!.finish_reason = FINISH[ev.reason];
            last.usage = this.usage();
          } else {
            const c = this.chunk({ content: "" });
            c.choices[0]!.finish_reason = FINISH[ev.reason];
            chunks.push(c);
          }
          break;
        }
        case "error":
          for (const c of chunks) out += sseData(c);
          chunks.length = 0;
          out += sseData({
            error: {
              message: ev.message,
              type: "api_error",
              param: null,
              code: ev.code ?? "generation_failed",
            },
          });
          break;
      }
    }
    for (const c of chunks) out += sseData(c);
    return out;
  }

  private usage(): ChatUsage {
    const completion = this.offset + this.completion;
    return {
      prompt_tokens: this.promptTokens,
      completion_tokens: completion,
      total_tokens: this.promptTokens + completion,
    };
  }

  private chunk(delta: ChatDelta): ChatCompletionChunk {
    if (!this.roleSent) {
      delta = { role: "assistant", ...delta };
      this.roleSent = true;
    }
    return {
      id: this.meta.id,
      object: "chat.completion.chunk",
      created: this.meta.created,
      model: this.meta.model,
      choices: [{ index: this.choice, delta, finish_reason: "" }],
      usage: this.usage(),
    };
  }
}

export function chatCompletion(meta: ChatMeta, results: GenResult[], promptTokens: number): ChatCompletion {
  let completion = 0;
  const choices = results.map((r, index) => {
    if (r.error) throw internal(r.error.message, r.error.code ?? "generation_failed");
    completion += r.usage.outputTokens;
    const message: ChatCompletionMessage = { role: "assistant", content: resultText(r) };
    const reasoning = resultReasoning(r);
    if (reasoning) {
      if (meta.reasoningFormat === "deepseek-style") message.reasoning_content = reasoning;
      else message.reasoning = reasoning;
    }
    const calls: ToolCall[] = [];
    for (const b of r.blocks) {
      if (b.kind === "tool_call") {
        calls.push({ id: b.callId, type: "function", function: { name: b.name, arguments: b.arguments } });
      }
    }
    if (calls.length > 0) message.tool_calls = calls;
    return { index, message, finish_reason: FINISH[r.finish] };
  });
  return {
    id: meta.id,
    object: "chat.completion",
    model: meta.model,
    created: meta.created,
    choices,
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
    },
  };
}
