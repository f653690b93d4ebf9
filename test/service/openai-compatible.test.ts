// The openai-compatible engine against a tiny chat-completions upstream written here: what it
// forwards, and how the upstream stream comes back out through all three formats.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  MessagesMessage,
  ResponseObject,
} from "../../src/api/types/index.ts";
import { countTokens } from "../../src/service/generation/tokens.ts";
import { dataUrl, media } from "./helpers/media.ts";
import { dataOf, useService } from "./helpers/service.ts";
import { startUpstream, type Upstream } from "./helpers/upstream.ts";

let up: Upstream;
beforeAll(async () => {
  up = await startUpstream({ deltas: [] });
});
afterAll(() => up.close());
const t = useService(() => ({
  chat: { upstream: up.url, upstreamModel: "tiny-llm", upstreamApiKey: "up-key" },
}));

const TEXT = [
  { reasoning_content: "Think" },
  { reasoning_content: "ing." },
  { content: "Hi" },
  { content: " there!" },
];
const TOOL = [
  { content: "One moment." },
  {
    tool_calls: [
      { index: 0, id: "call_up1", type: "function", function: { name: "lookup_order", arguments: "" } },
    ],
  },
  { tool_calls: [{ index: 0, function: { arguments: '{"order_id":' } }] },
  { tool_calls: [{ index: 0, function: { arguments: '"55"}' } }] },
];

describe("forwarding", () => {
  it("sends the canonical request upstream as a chat-completions stream", async () => {
    up.script = { deltas: [{ content: "ok" }] };
    up.requests.length = 0;
    const { status } = await t.json("/v1/chat/completions", {
      model: "svc-3.5-flash",
      max_tokens: 50,
      stop: ["END"],
      temperature: 0.3,
      response_format: { type: "json_object" },
      reasoning_effort: "low",
      tools: [
        {
          type: "function",
          function: {
            name: "lookup_order",
            description: "d",
            parameters: { type: "object", properties: {} },
          },
        },
      ],
      messages: [
        { role: "system", content: "sys" },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: dataUrl(media.png(), "image/png") } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "lookup_order", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "res" },
      ],
    });
    expect(status).toBe(200);
    const sent = up.requests[0]!;
    expect(sent).toMatchObject({
      model: "tiny-llm",
      stream: true,
      max_tokens: 50,
      stop: ["END"],
      temperature: 0.3,
      response_format: { type: "json_object" },
      reasoning_effort: "low",
    });
    const msgs = sent.messages as Record<string, unknown>[];
    expect(msgs[0]).toEqual({ role: "system", content: "sys" });
    expect(msgs[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image_url", image_url: { url: dataUrl(media.png(), "image/png"), detail: "low" } },
      ],
    });
    expect(msgs[2]).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "c1", function: { name: "lookup_order" } }],
    });
    expect(msgs[3]).toEqual({ role: "tool", tool_call_id: "c1", content: "res" });
  });
});

describe("rendering the upstream stream", () => {
  it("E1: reasoning and content, with usage counted here", async () => {
    up.script = { deltas: TEXT };
    const { body } = await t.json<ChatCompletion>("/v1/chat/completions", {
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(body.choices[0]!.message).toEqual({
      role: "assistant",
      content: "Hi there!",
      reasoning: "Thinking.",
    });
    expect(body.usage.completion_tokens).toBe(
      countTokens("Think") + countTokens("ing.") + countTokens("Hi") + countTokens(" there!"),
    );
    const chunks = dataOf<ChatCompletionChunk>(
      await t.events("/v1/chat/completions", {
        model: "svc-3.7-flash",
        stream: true,
        messages: [{ role: "user", content: "hi" }],
      }),
    );
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? "").join("")).toBe("Hi there!");
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe("stop");
  });

  it("E2: a tool call becomes a tool_use block with input_json_delta", async () => {
    up.script = { deltas: TOOL, finish: "tool_calls" };
    const events = await t.events("/v1/messages", {
      model: "svc-3.7-flash",
      max_tokens: 100,
      stream: true,
      messages: [{ role: "user", content: "order 55" }],
    });
    const data = events.map((e) => JSON.parse(e.data));
    const starts = data.filter((d) => d.type === "content_block_start").map((d) => d.content_block);
    expect(starts).toEqual([
      { type: "text", text: "" },
      { type: "tool_use", id: "call_up1", name: "lookup_order", input: {} },
    ]);
    const partial = data.filter((d) => d.delta?.type === "input_json_delta").map((d) => d.delta.partial_json);
    expect(partial).toEqual(['{"order_id":', '"55"}']);
    expect(data.find((d) => d.type === "message_delta").delta.stop_reason).toBe("tool_use");
    expect(data.filter((d) => d.type === "content_block_stop")).toHaveLength(2);
    const whole = await t.json<MessagesMessage>("/v1/messages", {
      model: "svc-3.7-flash",
      max_tokens: 100,
      messages: [{ role: "user", content: "order 55" }],
    });
    expect(whole.body.content[1]).toEqual({
      type: "tool_use",
      id: "call_up1",
      name: "lookup_order",
      input: { order_id: "55" },
    });
  });

  it("E3: reasoning, message and function_call items", async () => {
    up.script = { deltas: [{ reasoning_content: "Hmm." }, ...TOOL], finish: "tool_calls" };
    const { body } = await t.json<ResponseObject>("/v1/responses", {
      model: "svc-3.7-flash",
      input: "order 55",
    });
    expect(body.status).toBe("completed");
    expect(body.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call"]);
    expect(body.output[2]).toMatchObject({
      call_id: "call_up1",
      name: "lookup_order",
      arguments: '{"order_id":"55"}',
    });
  });

  it("cuts the upstream at max_tokens and stop sequences here as well", async () => {
    up.script = { deltas: [{ content: "one two" }, { content: " three STOP four" }] };
    const stop = await t.json<ChatCompletion>("/v1/chat/completions", {
      model: "svc-3.7-flash",
      stop: "STOP",
      messages: [{ role: "user", content: "count" }],
    });
    expect(stop.body.choices[0]!.message.content).toBe("one two three ");
    const cut = await t.json<ChatCompletion>("/v1/chat/completions", {
      model: "svc-3.7-flash",
      max_tokens: 2,
      messages: [{ role: "user", content: "count" }],
    });
    expect(cut.body.choices[0]).toMatchObject({ finish_reason: "length", message: { content: "one two" } });
  });
});

describe("upstream failure after the stream started", () => {
  it("ends an E1 stream with an in-band error object and no [DONE]; the openai client throws it", async () => {
    up.script = {
      deltas: [{ content: "Hel" }, { content: "lo" }, { content: "!" }],
      dieAfter: 2,
      delayMs: 10,
    };
    const events = await t.events("/v1/chat/completions", {
      model: "svc-3.7-flash",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    const last = events[events.length - 1]!;
    expect(last.data).not.toBe("[DONE]");
    expect(JSON.parse(last.data).error).toMatchObject({
      type: "api_error",
      message: expect.stringMatching(/generation failed/),
    });
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: "test-key", maxRetries: 0 });
    const s = await client.chat.completions.create({
      model: "svc-3.7-flash",
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    const err = await (async () => {
      for await (const _ of s) {
        // drain
      }
    })().catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/generation failed/);
  });
});

describe("upstream failures before the stream", () => {
  it("passes a refusal's status and message on as the JSON error", async () => {
    up.script = { deltas: [], status: 404 };
    const r = await t.error("/v1/chat/completions", {
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: "x" }],
    });
    expect(r.status).toBe(404);
    expect(r.error.message).toMatch(/upstream chat server answered HTTP 404: scripted failure 404/);
    up.script = { deltas: [], status: 503 };
    const m = await t.error("/v1/messages", {
      model: "svc-3.7-flash",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    });
    expect(m.status).toBe(500);
  });

  it("answers 500 naming the upstream when it cannot be reached", async () => {
    const { startLocalService } = await import("../../src/service/index.ts");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const dir = mkdtempSync("/tmp/svc-unreach-");
    const s = await startLocalService({
      dataDir: dir,
      apiKeys: ["k"],
      chat: { upstream: "http://127.0.0.1:9/v1" },
    });
    try {
      const res = await fetch(`${s.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: JSON.stringify({ model: "svc-3.7-flash", messages: [{ role: "user", content: "x" }] }),
      });
      expect(res.status).toBe(500);
      expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
        /127\.0\.0\.1:9.*unreachable/,
      );
    } finally {
      await s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
