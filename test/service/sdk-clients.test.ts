// The official openai and @anthropic-ai/sdk clients, and the project's own client, used unmodified
// against the local service.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/index.ts";
import { media } from "./helpers/media.ts";
import { KEY, useService } from "./helpers/service.ts";

const t = useService();
const HOURS = "We're open Monday to Friday, nine to six, and Saturday ten to four.";
const openai = () => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: KEY, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: t.url, apiKey: KEY, maxRetries: 0 });
const own = () => new SvcClient({ baseURL: t.url, apiKey: KEY, maxRetries: 0 });

const orderTool = {
  type: "function" as const,
  function: {
    name: "lookup_order",
    description: "Looks up an order by number",
    parameters: { type: "object", properties: { order_id: { type: "string", description: "order number" } } },
  },
};

describe("openai client", () => {
  it("chat completions without streaming", async () => {
    const r = await openai().chat.completions.create({
      model: "svc-3.5-flash",
      messages: [{ role: "user", content: "when are you open?" }],
    });
    expect(r.choices[0]!.message.content).toBe(HOURS);
    expect(r.usage!.completion_tokens).toBeGreaterThan(0);
  });

  it("chat completions streaming, raw and through the stream helper", async () => {
    const client = openai();
    const s = await client.chat.completions.create({
      model: "svc-3.5-flash",
      stream: true,
      messages: [{ role: "user", content: "when are you open?" }],
    });
    let text = "";
    for await (const chunk of s) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe(HOURS);
    const helper = client.chat.completions.stream({
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: "hello" }],
    });
    const final = await helper.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe("Hello! How can I help you today?");
    expect(final.choices[0]!.finish_reason).toBe("stop");
  });

  it("tools over two turns, with the stream helper's tool-call accumulation", async () => {
    const client = openai();
    const first = await client.chat.completions
      .stream({
        model: "svc-3.7-flash",
        messages: [{ role: "user", content: "where is order 314?" }],
        tools: [orderTool],
      })
      .finalChatCompletion();
    const msg = first.choices[0]!.message;
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = msg.tool_calls![0]! as { id: string; function: { name: string; arguments: string } };
    expect(call.function.name).toBe("lookup_order");
    expect(JSON.parse(call.function.arguments)).toEqual({ order_id: "314" });
    const second = await client.chat.completions.create({
      model: "svc-3.7-flash",
      tools: [orderTool],
      messages: [
        { role: "user", content: "where is order 314?" },
        { role: "assistant", content: msg.content, tool_calls: msg.tool_calls! },
        { role: "tool", tool_call_id: call.id, content: '{"status":"shipped"}' },
      ],
    });
    expect(second.choices[0]!.message.content).toBe("Order 314 is shipped.");
  });

  it("JSON mode", async () => {
    const r = await openai().chat.completions.create({
      model: "svc-3.5-flash",
      response_format: { type: "json_object" },
      messages: [{ role: "user", content: "when are you open?" }],
    });
    expect(JSON.parse(r.choices[0]!.message.content!)).toEqual({ reply: HOURS });
  });

  it("surfaces a 404 model as NotFoundError with the service's message", async () => {
    const err = await openai()
      .chat.completions.create({ model: "gpt-x", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as Error).message).toMatch(/svc-3.7-flash/);
  });

  it("responses without streaming, and streaming with tools through the stream helper", async () => {
    const client = openai();
    const r = await client.responses.create({ model: "svc-3.7-flash", input: "when are you open?" });
    expect(r.output_text).toBe(HOURS);
    const stream = client.responses.stream({
      model: "svc-3.7-flash",
      input: "where is order 77?",
      tools: [
        { type: "function", name: "lookup_order", parameters: orderTool.function.parameters, strict: false },
      ],
    });
    const types: string[] = [];
    stream.on("event", (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.status).toBe("completed");
    const call = final.output.find((o) => o.type === "function_call");
    expect(call).toMatchObject({ name: "lookup_order", arguments: '{"order_id":"77"}' });
    expect(types[0]).toBe("response.created");
    expect(types[types.length - 1]).toBe("response.completed");
    const next = await client.responses.create({
      model: "svc-3.7-flash",
      tools: [
        { type: "function", name: "lookup_order", parameters: orderTool.function.parameters, strict: false },
      ],
      input: [
        { role: "user", content: "where is order 77?" },
        {
          type: "function_call",
          call_id: (call as { call_id: string }).call_id,
          name: "lookup_order",
          arguments: '{"order_id":"77"}',
        },
        {
          type: "function_call_output",
          call_id: (call as { call_id: string }).call_id,
          output: '{"status":"packed"}',
        },
      ],
    });
    expect(next.output_text).toBe("Order 77 is packed.");
  });

  it("responses raw streaming with reasoning", async () => {
    const s = await openai().responses.create({
      model: "svc-3.7-flash",
      input: "hello",
      reasoning: { effort: "low" },
      stream: true,
    });
    const seen: string[] = [];
    for await (const e of s) seen.push(e.type);
    expect(seen).toContain("response.reasoning_text.delta");
    expect(seen[seen.length - 1]).toBe("response.completed");
  });
});

describe("anthropic client", () => {
  it("messages.create", async () => {
    const m = await anthropic().messages.create({
      model: "svc-3.7-flash",
      max_tokens: 100,
      messages: [{ role: "user", content: "when are you open?" }],
    });
    expect(m.content).toEqual([{ type: "text", text: HOURS }]);
    expect(m.stop_reason).toBe("end_turn");
    expect(m.usage.input_tokens).toBeGreaterThan(0);
  });

  it("messages.stream with text events and finalMessage()", async () => {
    const stream = anthropic().messages.stream({
      model: "svc-3.7-flash",
      max_tokens: 100,
      messages: [{ role: "user", content: "when are you open?" }],
    });
    const parts: string[] = [];
    stream.on("text", (t) => parts.push(t));
    const final = await stream.finalMessage();
    expect(parts.join("")).toBe(HOURS);
    expect(parts.length).toBeGreaterThan(5);
    expect(final.content).toEqual([{ type: "text", text: HOURS }]);
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it("tools: a streamed tool_use, then the answer to its tool_result", async () => {
    const client = anthropic();
    const tools = [
      {
        name: "lookup_order",
        description: "Looks up an order",
        input_schema: orderTool.function.parameters as Anthropic.Tool.InputSchema,
      },
    ];
    const first = await client.messages
      .stream({
        model: "svc-3.7-flash",
        max_tokens: 200,
        tools,
        messages: [{ role: "user", content: "order 2020 please" }],
      })
      .finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const use = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(use.input).toEqual({ order_id: "2020" });
    const second = await client.messages.create({
      model: "svc-3.7-flash",
      max_tokens: 200,
      tools,
      messages: [
        { role: "user", content: "order 2020 please" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: use.id, content: '{"status":"delivered"}' }],
        },
      ],
    });
    expect(second.content).toEqual([{ type: "text", text: "Order 2020 is delivered." }]);
  });

  it("surfaces a refused field as a BadRequestError", async () => {
    const err = await anthropic()
      .messages.create({
        model: "svc-3.7-flash",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        metadata: { user_id: "u" },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toMatch(/metadata/);
  });
});

describe("the project's own client", () => {
  it("chat, messages and responses, streaming and not", async () => {
    const c = own();
    const r = await c.chat.create({
      model: "svc-3.5-flash",
      messages: [{ role: "user", content: "when are you open?" }],
    });
    expect(r.choices[0]!.message.content).toBe(HOURS);
    expect(
      await c.chat
        .stream({ model: "svc-3.5-flash", messages: [{ role: "user", content: "hello" }] })
        .finalContent(),
    ).toBe("Hello! How can I help you today?");
    const m = await c.messages
      .stream({ model: "svc-3.7-flash", max_tokens: 50, messages: [{ role: "user", content: "hello" }] })
      .finalMessage();
    expect(m.content).toEqual([{ type: "text", text: "Hello! How can I help you today?" }]);
    const resp = await c.responses
      .stream({ model: "svc-3.7-flash", input: "where are you located?", reasoning: { effort: "low" } })
      .finalResponse();
    expect(resp.status).toBe("completed");
    expect(resp.output.map((o) => o.type)).toEqual(["reasoning", "message"]);
  });

  it("files: upload a path, see it, use it in chat as svcfile://, delete it", async () => {
    const c = own();
    const f = await c.files.upload({ path: media.jpeg() });
    expect((await c.files.list()).data.map((x) => x.id)).toContain(f.id);
    const r = await c.chat.create({
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `svcfile://${f.id}` } }] }],
    });
    expect(r.choices[0]!.message.content).toBe("I can see a 320 by 200 pixel JPEG image.");
    expect(await c.files.delete(f.id)).toEqual({ id: f.id, object: "file", deleted: true });
  });
});
