// E3 renderers. Streaming: a state machine over output items with one gapless sequence_number:
// created → in_progress → per item: output_item.added → part added → deltas → done → part done →
// output_item.done → completed | incomplete | failed. Non-streaming: the same items at once.
import type {
  FunctionCallItem,
  MessageItem,
  OutputItem,
  OutputTextPart,
  ReasoningItem,
  ResponseObject,
  ResponsesUsage,
} from "../../../api/types/index.ts";
import type { GenResult } from "../../generation/collect.ts";
import type { FinishReason, GenBatch, GenEvent, Usage } from "../../generation/events.ts";
import { newId } from "../../ids.ts";
import { sseEvent } from "../../sse-writer.ts";
import type { ResponseEcho } from "./parse.ts";

export interface ResponseMeta {
  id: string;
  createdAt: number;
  model: string;
  echo: ResponseEcho;
}

const now = () => Math.floor(Date.now() / 1000);

export function responseSnapshot(meta: ResponseMeta): ResponseObject {
  return {
    id: meta.id,
    object: "response",
    created_at: meta.createdAt,
    completed_at: null,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    model: meta.model,
    output: [],
    usage: null,
    ...meta.echo,
  };
}

export function responsesUsage(u: Usage): ResponsesUsage {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens, tool_output_tokens: 0 },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

type Open =
  | { kind: "reasoning"; item: ReasoningItem; index: number; text: string }
  | { kind: "text"; item: MessageItem; index: number; text: string }
  | { kind: "tool_call"; item: FunctionCallItem; index: number; text: string };

export class ResponsesStreamRenderer {
  private readonly meta: ResponseMeta;
  private seq = 0;
  private readonly output: OutputItem[] = [];
  private open: Open | undefined;
  private usage: Usage;

  constructor(meta: ResponseMeta, inputTokens: number) {
    this.meta = meta;
    this.usage = { inputTokens, outputTokens: 0, reasoningTokens: 0 };
  }

  start(): string {
    const snap = responseSnapshot(this.meta);
    return (
      this.ev("response.created", { response: snap }) + this.ev("response.in_progress", { response: snap })
    );
  }

  push(batch: GenBatch): string {
    let out = "";
    batch.forEach((ev, i) => {
      out += this.event(ev, batch, i);
    });
    return out;
  }

  private event(ev: GenEvent, batch: GenBatch, i: number): string {
    switch (ev.type) {
      case "block_start":
        return this.startItem(ev);
      case "delta":
        return this.delta(ev.text, ev.tokens ?? 0);
      case "block_stop": {
        // A block cut by the output budget ends incomplete: the finish follows in the same batch.
        const cut = batch.slice(i + 1).some((e) => e.type === "finish" && e.reason === "length");
        return this.stopItem(cut ? "incomplete" : "completed");
      }
      case "usage":
        this.usage = { ...ev.usage };
        return "";
      case "finish":
        return this.finish(ev.reason);
      case "error":
        return this.fail(ev.message, ev.code);
    }
  }

  private startItem(ev: Extract<GenEvent, { type: "block_start" }>): string {
    const index = this.output.length;
    if (ev.kind === "reasoning") {
      const item: ReasoningItem = {
        type: "reasoning",
        id: newId("rs_"),
        summary: [],
        content: [],
        encrypted_content: null,
        status: "in_progress",
      };
      this.open = { kind: "reasoning", item, index, text: "" };
      this.output.push(item);
      return (
        this.ev("response.output_item.added", { output_index: index, item: clone(item) }) +
        this.ev("response.reasoning_part.added", {
          output_index: index,
          item_id: item.id,
          content_index: 0,
          part: { type: "reasoning_text", text: "" },
        })
      );
    }
    if (ev.kind === "text") {
      const item: MessageItem = {
        type: "message",
        id: newId("msg_"),
        status: "in_progress",
        role: "assistant",
        content: [],
      };
      this.open = { kind: "text", item, index, text: "" };
      this.output.push(item);
      return (
        this.ev("response.output_item.added", { output_index: index, item: clone(item) }) +
        this.ev("response.content_part.added", {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          part: textPart(""),
        })
      );
    }
    const item: FunctionCallItem = {
      type: "function_call",
      id: newId("fc_"),
      call_id: ev.callId,
      name: ev.name,
      arguments: "",
      status: "in_progress",
    };
    this.open = { kind: "tool_call", item, index, text: "" };
    this.output.push(item);
    return this.ev("response.output_item.added", { output_index: index, item: clone(item) });
  }

  private delta(text: string, tokens: number): string {
    this.usage.outputTokens += tokens;
    const o = this.open;
    if (!o) return "";
    o.text += text;
    if (o.kind === "reasoning") {
      this.usage.reasoningTokens += tokens;
      return this.ev("response.reasoning_text.delta", {
        output_index: o.index,
        item_id: o.item.id,
        content_index: 0,
        delta: text,
      });
    }
    if (o.kind === "text") {
      return this.ev("response.output_text.delta", {
        item_id: o.item.id,
        output_index: o.index,
        content_index: 0,
        delta: text,
        logprobs: [],
      });
    }
    return this.ev("response.function_call_arguments.delta", {
      item_id: o.item.id,
      output_index: o.index,
      delta: text,
    });
  }

  private stopItem(status: "completed" | "incomplete"): string {
    const o = this.open;
    if (!o) return "";
    this.open = undefined;
    let out = "";
    if (o.kind === "reasoning") {
      const part = { type: "reasoning_text", text: o.text };
      o.item.content = [part];
      o.item.status = status;
      const ids = { output_index: o.index, item_id: o.item.id, content_index: 0 };
      out += this.ev("response.reasoning_text.done", { ...ids, text: o.text });
      out += this.ev("response.reasoning_part.done", { ...ids, part });
    } else if (o.kind === "text") {
      const part = textPart(o.text);
      o.item.content = [part];
      o.item.status = status;
      const ids = { item_id: o.item.id, output_index: o.index, content_index: 0 };
      out += this.ev("response.output_text.done", { ...ids, text: o.text, logprobs: [] });
      out += this.ev("response.content_part.done", { ...ids, part });
    } else {
      o.item.arguments = o.text;
      o.item.status = status;
      out += this.ev("response.function_call_arguments.done", {
        item_id: o.item.id,
        output_index: o.index,
        arguments: o.text,
        name: o.item.name,
      });
    }
    return out + this.ev("response.output_item.done", { output_index: o.index, item: clone(o.item) });
  }

  private finish(reason: FinishReason): string {
    const out = this.stopItem(reason === "length" ? "incomplete" : "completed");
    const response: ResponseObject = {
      ...responseSnapshot(this.meta),
      output: this.output.map(clone),
      usage: responsesUsage(this.usage),
    };
    if (reason === "length") {
      response.status = "incomplete";
      response.incomplete_details = { reason: "max_output_tokens" };
      return out + this.ev("response.incomplete", { response });
    }
    response.status = "completed";
    response.completed_at = now();
    return out + this.ev("response.completed", { response });
  }

  private fail(message: string, code?: string): string {
    const response: ResponseObject = {
      ...responseSnapshot(this.meta),
      status: "failed",
      error: { code: code ?? "server_error", message },
      output: this.output.map(clone),
      usage: responsesUsage(this.usage),
    };
    return this.ev("response.failed", { response });
  }

  /** Renders a failure that happened outside the generation (e.g. a later engine error). */
  failure(message: string, code?: string): string {
    return this.fail(message, code);
  }

  private ev(type: string, fields: Record<string, unknown>): string {
    return sseEvent(type, { type, sequence_number: this.seq++, ...fields });
  }
}

export function responseObject(meta: ResponseMeta, r: GenResult): ResponseObject {
  const truncated = r.finish === "length";
  const output: OutputItem[] = r.blocks.map((b, i) => {
    const status = truncated && i === r.blocks.length - 1 ? "incomplete" : "completed";
    if (b.kind === "reasoning") {
      return {
        type: "reasoning",
        id: newId("rs_"),
        summary: [],
        content: [{ type: "reasoning_text", text: b.text }],
        encrypted_content: null,
        status,
      };
    }
    if (b.kind === "text") {
      return { type: "message", id: newId("msg_"), status, role: "assistant", content: [textPart(b.text)] };
    }
    return {
      type: "function_call",
      id: newId("fc_"),
      call_id: b.callId,
      name: b.name,
      arguments: b.arguments,
      status,
    };
  });
  const response: ResponseObject = {
    ...responseSnapshot(meta),
    output,
    usage: responsesUsage(r.usage),
  };
  if (r.error) {
    response.status = "failed";
    response.error = { code: r.error.code ?? "server_error", message: r.error.message };
  } else if (truncated) {
    response.status = "incomplete";
    response.incomplete_details = { reason: "max_output_tokens" };
  } else {
    response.status = "completed";
    response.completed_at = now();
  }
  return response;
}

function textPart(text: string): OutputTextPart {
  return { type: "output_text", text, annotations: [] };
}

function clone<T>(v: T): T {
  return structuredClone(v);
}
