// The openai-compatible chat engine: forwards the canonical request to any chat-completions server
// (Ollama, vLLM, llama.cpp server) as a stream, and turns the upstream chunks back into canonical
// events, so all three formats (E1, E2, E3) work on top of it.
import { ApiError } from "../../errors.ts";
import type { FinishReason, GenBatch, GenEvent } from "../../generation/events.ts";
import type { ConvMessage, GenRequest, InputPart } from "../../generation/request.ts";
import { newId } from "../../ids.ts";
import { unreachable, upstreamMessage } from "../upstream.ts";
import type { ChatEngine, EngineCall } from "./engine.ts";

export interface OpenAiCompatibleOptions {
  /** Base URL ending before /chat/completions, e.g. http://127.0.0.1:11434/v1. */
  baseUrl: string;
  /** Model name sent upstream; default: the request's svc-* name. */
  model?: string;
  apiKey?: string;
}

type Json = Record<string, unknown>;

export class OpenAiCompatibleEngine implements ChatEngine {
  readonly name = "openai-compatible";
  private readonly opts: OpenAiCompatibleOptions;

  constructor(opts: OpenAiCompatibleOptions) {
    this.opts = { ...opts, baseUrl: opts.baseUrl.replace(/\/+$/, "") };
  }

  async open(req: GenRequest, call: EngineCall): Promise<AsyncIterable<GenBatch>> {
    const url = `${this.opts.baseUrl}/chat/completions`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
        },
        body: JSON.stringify(this.upstreamBody(req)),
        signal: call.signal,
      });
    } catch (err) {
      throw unreachable("chat server", this.opts.baseUrl, err);
    }
    if (!res.ok || !res.body) {
      const text = (await res.text().catch(() => "")).slice(0, 500);
      const status = [400, 404, 413, 422, 429].includes(res.status) ? res.status : 500;
      throw new ApiError(
        status,
        `upstream chat server answered HTTP ${res.status}: ${upstreamMessage(text)}`,
        {
          code: "upstream_error",
        },
      );
    }
    return translate(dataLines(res.body));
  }

  private upstreamBody(req: GenRequest): Json {
    const body: Json = {
      model: this.opts.model ?? req.model,
      messages: req.messages.map(toUpstreamMessage),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (req.tools.length > 0) {
      body.tools = req.tools.map((t) => ({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    }
    if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
    if (req.stop.length > 0) body.stop = req.stop;
    if (req.temperature !== undefined) body.temperature = req.temperature;
    if (req.topP !== undefined) body.top_p = req.topP;
    if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
    if (req.reasoning) body.reasoning_effort = req.reasoning.effort;
    if (req.output.kind === "json") {
      body.response_format = req.output.schema
        ? {
            type: "json_schema",
            json_schema: { name: req.output.name ?? "output", schema: req.output.schema },
          }
        : { type: "json_object" };
    }
    return body;
  }
}

function toUpstreamMessage(m: ConvMessage): Json {
  switch (m.role) {
    case "system":
      return { role: "system", content: m.text };
    case "user":
      return { role: "user", content: m.parts.map(toUpstreamPart) };
    case "assistant": {
      const out: Json = { role: "assistant", content: m.text || null };
      if (m.toolCalls.length > 0) {
        out.tool_calls = m.toolCalls.map((c) => ({
          id: c.id,
          type: "function",
          function: { name: c.name, arguments: c.arguments },
        }));
      }
      return out;
    }
    case "tool":
      return { role: "tool", tool_call_id: m.callId, content: m.content };
  }
}

/** Media goes upstream inline (the upstream cannot read this service's files or always reach URLs). */
function toUpstreamPart(p: InputPart): Json {
  if (p.type === "text") return { type: "text", text: p.text };
  const r = p.resolved;
  if (p.type === "image") {
    const url = r?.bytes ? `data:${r.mime};base64,${r.bytes.toString("base64")}` : p.url;
    return { type: "image_url", image_url: { url, detail: p.detail ?? "low" } };
  }
  if (p.type === "audio" && r?.bytes) {
    return { type: "input_audio", input_audio: { data: r.bytes.toString("base64"), format: r.format } };
  }
  // Chat-completions servers take no video: describe what the service perceived instead.
  const seconds = r?.durationS === undefined ? "unknown length" : `${Math.round(r.durationS * 10) / 10} s`;
  return { type: "text", text: `[${p.type}: ${r?.format ?? "unknown format"}, ${seconds}]` };
}

/** The `data:` payloads of an SSE body (the only field chat-completions streams use). */
async function* dataLines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buf = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.search(/\r?\n/);
    while (nl >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(buf[nl] === "\r" ? nl + 2 : nl + 1);
      if (line === "") {
        if (data.length > 0) yield data.join("\n");
        data = [];
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line[5] === " " ? 6 : 5));
      }
      nl = buf.search(/\r?\n/);
    }
  }
  if (data.length > 0) yield data.join("\n");
}

const FINISH: Readonly<Record<string, FinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
};

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** Upstream chunks → canonical batches: one open block at a time, in the order content arrives. */
async function* translate(lines: AsyncIterable<string>): AsyncGenerator<GenBatch> {
  let open: { block: number; kind: "text" | "reasoning" | "tool"; tool?: number } | undefined;
  let next = 0;
  for await (const line of lines) {
    if (line.trim() === "[DONE]") break;
    let chunk: Json;
    try {
      chunk = JSON.parse(line) as Json;
    } catch {
      throw new Error(`upstream sent a chunk that is not JSON: ${line.slice(0, 120)}`);
    }
    if (chunk.error) throw new Error(`upstream error: ${upstreamMessage(JSON.stringify(chunk))}`);
    const choice = (chunk.choices as Json[] | undefined)?.[0];
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as Json;
    const out: GenEvent[] = [];
    const ensure = (kind: "text" | "reasoning") => {
      if (open?.kind === kind) return open.block;
      if (open) out.push({ type: "block_stop", block: open.block });
      open = { block: next++, kind };
      out.push({ type: "block_start", block: open.block, kind });
      return open.block;
    };
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning)
      out.push({ type: "delta", block: ensure("reasoning"), text: reasoning });
    if (typeof delta.content === "string" && delta.content) {
      out.push({ type: "delta", block: ensure("text"), text: delta.content });
    }
    for (const tc of (delta.tool_calls as ChunkToolCall[] | undefined) ?? []) {
      const index = tc.index ?? 0;
      if (open?.kind !== "tool" || open.tool !== index) {
        if (open) out.push({ type: "block_stop", block: open.block });
        open = { block: next++, kind: "tool", tool: index };
        out.push({
          type: "block_start",
          block: open.block,
          kind: "tool_call",
          callId: tc.id ?? newId("call_"),
          name: tc.function?.name ?? "",
        });
      }
      if (tc.function?.arguments) out.push({ type: "delta", block: open.block, text: tc.function.arguments });
    }
    const reason = choice.finish_reason;
    if (typeof reason === "string" && reason) {
      // The finish ends generation here; a trailing usage chunk is not needed (tokens are counted here).
      if (open) out.push({ type: "block_stop", block: open.block });
      out.push({ type: "finish", reason: FINISH[reason] ?? "stop" });
      yield out;
      return;
    }
    if (out.length > 0) yield out;
  }
  if (open) yield [{ type: "block_stop", block: open.block }];
}
