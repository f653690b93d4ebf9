// E2 renderers. Streaming: message_start (with the real input token count), then per surfaced block
// exactly one content_block_start / deltas / content_block_stop (text_delta, input_json_delta),
// message_delta with the stop reason and usage, message_stop; ping frames keep an idle stream alive.
// Reasoning blocks are not surfaced (the format shows no reasoning block).
import type {
  MessagesContentBlock,
  MessagesMessage,
  MessagesStopReason,
  MessagesStreamEvent,
} from "../../../api/types/index.ts";
import { internal } from "../../errors.ts";
import type { GenResult } from "../../generation/collect.ts";
import type { FinishReason, GenBatch } from "../../generation/events.ts";
import { sseEvent } from "../../sse-writer.ts";

export interface MessagesMeta {
  id: string;
  model: string;
}

const STOP: Readonly<Record<FinishReason, MessagesStopReason>> = {
  stop: "end_turn",
  tool_calls: "tool_use",
  length: "max_tokens",
};

const frame = (ev: MessagesStreamEvent): string => sseEvent(ev.type, ev);

export class MessagesStreamRenderer {
  private readonly meta: MessagesMeta;
  private readonly inputTokens: number;
  private outputTokens = 0;
  /** Wire index of the open block, or -1 while a block is not surfaced (reasoning) or none is open. */
  private open = -1;
  private next = 0;

  constructor(meta: MessagesMeta, inputTokens: number) {
    this.meta = meta;
    this.inputTokens = inputTokens;
  }

  start(): string {
    return frame({
      type: "message_start",
      message: {
        id: this.meta.id,
        type: "message",
        role: "assistant",
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: this.inputTokens, output_tokens: 0 },
      },
    });
  }

  ping(): string {
    return frame({ type: "ping" });
  }

  push(batch: GenBatch): string {
    let out = "";
    for (const ev of batch) {
      switch (ev.type) {
        case "block_start":
          if (ev.kind === "reasoning") {
            this.open = -1;
            break;
          }
          this.open = this.next++;
          out += frame({
            type: "content_block_start",
            index: this.open,
            content_block:
              ev.kind === "text"
                ? { type: "text", text: "" }
                : { type: "tool_use", id: ev.callId, name: ev.name, input: {} },
          });
          this.kind = ev.kind;
          break;
        case "delta":
          this.outputTokens += ev.tokens ?? 0;
          if (this.open < 0) break;
          out += frame({
            type: "content_block_delta",
            index: this.open,
            delta:
              this.kind === "text"
                ? { type: "text_delta", text: ev.text }
                : { type: "input_json_delta", partial_json: ev.text },
          });
          break;
        case "block_stop":
          if (this.open >= 0) out += frame({ type: "content_block_stop", index: this.open });
          this.open = -1;
          break;
        case "usage":
          this.outputTokens = ev.usage.outputTokens;
          break;
        case "finish":
          out += frame({
            type: "message_delta",
            delta: { stop_reason: STOP[ev.reason], stop_sequence: ev.stopSequence ?? null },
            usage: { input_tokens: this.inputTokens, output_tokens: this.outputTokens },
          });
          out += frame({ type: "message_stop" });
          break;
        case "error":
          out += frame({ type: "error", error: { type: "api_error", message: ev.message } });
          break;
      }
    }
    return out;
  }

  private kind: "text" | "tool_call" = "text";
}

export function messagesMessage(meta: MessagesMeta, r: GenResult): MessagesMessage {
  if (r.error) throw internal(r.error.message, r.error.code ?? "generation_failed");
  const content: MessagesContentBlock[] = [];
  for (const b of r.blocks) {
    if (b.kind === "text") content.push({ type: "text", text: b.text });
    else if (b.kind === "tool_call")
      content.push({ type: "tool_use", id: b.callId, name: b.name, input: parseInput(b.arguments) });
  }
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content,
    stop_reason: STOP[r.finish],
    stop_sequence: r.stopSequence ?? null,
    usage: { input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens },
  } as MessagesMessage;
}

/** Tool input as an object; arguments cut short by max_tokens are not JSON and give {}. */
function parseInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return {};
  }
}
