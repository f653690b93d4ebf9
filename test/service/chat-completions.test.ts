// E1 over HTTP: validation of every documented field, the chunk stream's shape, n choices, stop
// sequences, max_tokens, JSON mode, tools over several turns, reasoning fields and effort rules.
import { describe, expect, it } from "vitest";
import type { ChatCompletion, ChatCompletionChunk } from "../../src/api/types/index.ts";
import { countTokens } from "../../src/service/generation/tokens.ts";
import { dataOf, useService } from "./helpers/service.ts";

const t = useService();
const PATH = "/v1/chat/completions";
const user = (content: string) => ({ role: "user", content });
const base = { model: "svc-3.5-flash", messages: [user("when are you open?")] };
const HOURS = "We're open Monday to Friday, nine to six, and Saturday ten to four.";
const ORDER_TOOL = {
  type: "function",
  function: {
    name: "lookup_order",
    description: "Looks up an order",
    parameters: { type: "object", properties: { order_id: { type: "string", description: "order number" } } },
  },
};

describe("E1 validation", () => {
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ["missing model", { messages: base.messages }, "model", /required/],
    ["missing messages", { model: "svc-3.5-flash" }, "messages", /required/],
    ["empty messages", { ...base, messages: [] }, "messages", /at least one/],
    [
      "bad role",
      { ...base, messages: [{ role: "robot", content: "x" }] },
      "messages[0].role",
      /"system", "user"/,
    ],
    ["temperature above 2", { ...base, temperature: 2.5 }, "temperature", /from 0 to 2/],
    ["temperature negative", { ...base, temperature: -0.1 }, "temperature", /from 0 to 2/],
    ["top_p above 1", { ...base, top_p: 1.5 }, "top_p", /from 0 to 1/],
    ["n above 5", { ...base, n: 6 }, "n", /from 1 to 5/],
    ["n not integer", { ...base, n: 1.5 }, "n", /integer/],
    ["max_tokens zero", { ...base, max_tokens: 0 }, "max_tokens", /at least 1/],
    ["frequency_penalty above 1", { ...base, frequency_penalty: 1.2 }, "frequency_penalty", /from 0 to 1/],
    ["stream not boolean", { ...base, stream: "yes" }, "stream", /true or false/],
    ["stop empty string", { ...base, stop: [""] }, "stop[0]", /empty/],
    [
      "response_format type",
      { ...base, response_format: { type: "yaml" } },
      "response_format.type",
      /"text", "json_object"/,
    ],
    [
      "reasoning_format",
      { ...base, reasoning_format: "raw" },
      "reasoning_format",
      /"general", "deepseek-style"/,
    ],
    ["reasoning_effort", { ...base, reasoning_effort: "max" }, "reasoning_effort", /"low", "medium", "high"/],
    [
      "medium effort on svc-3.5-flash-2603",
      { ...base, model: "svc-3.5-flash-2603", reasoning_effort: "medium" },
      "reasoning_effort",
      /"low", "high" for svc-3.5-flash-2603/,
    ],
    [
      "tool name",
      { ...base, tools: [{ ...ORDER_TOOL, function: { ...ORDER_TOOL.function, name: "look up" } }] },
      "tools[0].function.name",
      /letters, digits/,
    ],
    [
      "tool property type",
      {
        ...base,
        tools: [
          {
            ...ORDER_TOOL,
            function: {
              ...ORDER_TOOL.function,
              parameters: { type: "object", properties: { a: { type: "date" } } },
            },
          },
        ],
      },
      "tools[0].function.parameters.properties.a.type",
      /string, number, integer, object, array, boolean/,
    ],
    [
      "image detail",
      {
        ...base,
        messages: [
          {
            role: "user",
            content: [
              { type: "image_url", image_url: { url: "data:image/png;base64,AA==", detail: "auto" } },
            ],
          },
        ],
      },
      "messages[0].content[0].image_url.detail",
      /"low", "high"/,
    ],
    [
      "part type",
      { ...base, messages: [{ role: "user", content: [{ type: "file", file: {} }] }] },
      "messages[0].content[0].type",
      /"text", "image_url", "video_url", "input_audio"/,
    ],
    [
      "tool without tool_call_id",
      { ...base, messages: [user("hi"), { role: "tool", content: "x" }] },
      "messages[1].tool_call_id",
      /required/,
    ],
  ];
  for (const [name, body, param, message] of cases) {
    it(`400 for ${name}, naming ${param}`, async () => {
      const { status, error } = await t.error(PATH, body);
      expect(status).toBe(400);
      expect(error.type).toBe("invalid_request_error");
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    });
  }

  it("404 for an unknown model, listing the models", async () => {
    const { status, error } = await t.error(PATH, { ...base, model: "gpt-4o" });
    expect(status).toBe(404);
    expect(error.code).toBe("model_not_found");
    expect(error.message).toMatch(/svc-3.7-flash, svc-3.5-flash, svc-3.5-flash-2603/);
  });

  it("400 for a body that is not JSON, 422 for a tool result answering no call", async () => {
    const bad = await t.post(PATH, "{not json");
    expect(bad.status).toBe(400);
    const { status, error } = await t.error(PATH, {
      ...base,
      messages: [user("hi"), { role: "tool", tool_call_id: "call_nope", content: "{}" }],
    });
    expect(status).toBe(422);
    expect(error.param).toBe("messages[1].tool_call_id");
  });

  it("ignores fields the spec does not list", async () => {
    const { status, body } = await t.json<ChatCompletion>(PATH, {
      ...base,
      logit_bias: { 1: 2 },
      user: "u1",
      seed: 3,
    });
    expect(status).toBe(200);
    expect(body.choices[0]!.message.content).toBe(HOURS);
  });
});

describe("E1 answers", () => {
  it("returns a chat.completion with real BPE token usage", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, base);
    expect(body).toMatchObject({ object: "chat.completion", model: "svc-3.5-flash" });
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.choices).toEqual([
      { index: 0, message: { role: "assistant", content: HOURS }, finish_reason: "stop" },
    ]);
    expect(body.usage.completion_tokens).toBe(countTokens(HOURS));
    expect(body.usage.completion_tokens).not.toBe(HOURS.length);
    // 3 framing tokens per message plus 3 priming tokens around the text's own tokens.
    expect(body.usage.prompt_tokens).toBe(countTokens("when are you open?") + 6);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it("greets when the conversation has no user turn yet", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, {
      model: "svc-3.7-flash",
      messages: [{ role: "system", content: "You are the Acme Bikes hotline." }],
    });
    expect(body.choices[0]!.message.content).toMatch(/^Thanks for calling .+ How can I help you\?$/);
  });

  it("streams chunks: role first, '' until the last content chunk has stop, cumulative usage, [DONE]", async () => {
    const events = await t.events(PATH, { ...base, stream: true });
    expect(events[events.length - 1]!.data).toBe("[DONE]");
    const chunks = dataOf<ChatCompletionChunk>(events);
    expect(chunks.length).toBeGreaterThan(5);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    for (const c of chunks.slice(0, -1)) expect(c.choices[0]!.finish_reason).toBe("");
    const last = chunks[chunks.length - 1]!;
    expect(last.choices[0]!.finish_reason).toBe("stop");
    expect(last.choices[0]!.delta.content).toBeTruthy();
    expect(chunks.map((c) => c.choices[0]!.delta.content).join("")).toBe(HOURS);
    let prev = 0;
    for (const c of chunks) {
      expect(c.object).toBe("chat.completion.chunk");
      expect(c.usage!.completion_tokens).toBeGreaterThan(prev);
      prev = c.usage!.completion_tokens;
    }
    expect(prev).toBe(countTokens(HOURS));
  });

  it("gives n choices, streamed with their indices and usage summed over them", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, { ...base, n: 3 });
    expect(body.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(body.usage.completion_tokens).toBe(3 * countTokens(HOURS));
    const chunks = dataOf<ChatCompletionChunk>(await t.events(PATH, { ...base, n: 2, stream: true }));
    const text = (i: number) =>
      chunks
        .filter((c) => c.choices[0]!.index === i)
        .map((c) => c.choices[0]!.delta.content ?? "")
        .join("");
    expect(text(0)).toBe(HOURS);
    expect(text(1)).toBe(HOURS);
    expect(chunks.filter((c) => c.choices[0]!.finish_reason === "stop")).toHaveLength(2);
    expect(chunks[chunks.length - 1]!.usage!.completion_tokens).toBe(2 * countTokens(HOURS));
  });

  it("stops before a stop sequence, also when it spans streamed words", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, { ...base, stop: ["nine to"] });
    expect(body.choices[0]!.message.content).toBe("We're open Monday to Friday, ");
    expect(body.choices[0]!.finish_reason).toBe("stop");
    const chunks = dataOf<ChatCompletionChunk>(
      await t.events(PATH, { ...base, stream: true, stop: "Friday, nine" }),
    );
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? "").join("")).toBe("We're open Monday to ");
  });

  it("cuts at max_tokens with finish_reason length", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, { ...base, max_tokens: 4 });
    expect(body.choices[0]!.finish_reason).toBe("length");
    expect(body.usage.completion_tokens).toBe(4);
    expect(countTokens(body.choices[0]!.message.content)).toBe(4);
    expect(HOURS.startsWith(body.choices[0]!.message.content)).toBe(true);
  });

  it("answers valid JSON in JSON mode", async () => {
    const { body } = await t.json<ChatCompletion>(PATH, {
      ...base,
      response_format: { type: "json_object" },
    });
    expect(JSON.parse(body.choices[0]!.message.content)).toEqual({ reply: HOURS });
    const chunks = dataOf<ChatCompletionChunk>(
      await t.events(PATH, { ...base, stream: true, response_format: { type: "json_object" } }),
    );
    expect(JSON.parse(chunks.map((c) => c.choices[0]!.delta.content ?? "").join(""))).toEqual({
      reply: HOURS,
    });
  });

  it("calls a tool, then answers from its result, over several turns", async () => {
    const messages: Record<string, unknown>[] = [user("I'd like to know where my order is")];
    let r = (await t.json<ChatCompletion>(PATH, { model: "svc-3.7-flash", messages, tools: [ORDER_TOOL] }))
      .body;
    expect(r.choices[0]!.message.content).toBe("Sure. What's your order number?");
    messages.push(
      { role: "assistant", content: r.choices[0]!.message.content },
      user("it's one two three four five"),
    );
    r = (await t.json<ChatCompletion>(PATH, { model: "svc-3.7-flash", messages, tools: [ORDER_TOOL] })).body;
    const choice = r.choices[0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.tool_calls).toHaveLength(1);
    const call = choice.message.tool_calls![0]!;
    expect(call).toMatchObject({ type: "function", function: { name: "lookup_order" } });
    expect(JSON.parse(call.function.arguments)).toEqual({ order_id: "12345" });
    messages.push(
      { role: "assistant", content: choice.message.content, tool_calls: choice.message.tool_calls },
      { role: "tool", tool_call_id: call.id, content: JSON.stringify({ status: "out for delivery" }) },
    );
    r = (await t.json<ChatCompletion>(PATH, { model: "svc-3.7-flash", messages, tools: [ORDER_TOOL] })).body;
    expect(r.choices[0]!.message.content).toBe("Order 12345 is out for delivery.");
    expect(r.choices[0]!.finish_reason).toBe("stop");
  });

  it("streams a tool call as an id+name chunk, then argument fragments, finish tool_calls", async () => {
    const chunks = dataOf<ChatCompletionChunk>(
      await t.events(PATH, {
        model: "svc-3.7-flash",
        stream: true,
        messages: [user("please transfer me to a person")],
        tools: [
          {
            type: "function",
            function: {
              name: "transfer_call",
              description: "transfer",
              parameters: { type: "object", properties: { reason: { type: "string" } } },
            },
          },
        ],
      }),
    );
    const text = chunks.map((c) => c.choices[0]!.delta.content ?? "").join("");
    expect(text).toBe("Sure, let me put you through to a person.");
    const calls = chunks.flatMap((c) => c.choices[0]!.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "transfer_call", arguments: "" },
    });
    expect(calls[0]!.id).toMatch(/^call_/);
    expect(calls.length).toBeGreaterThan(2);
    expect(JSON.parse(calls.map((c) => c.function?.arguments ?? "").join(""))).toEqual({
      reason: "caller asked for a person",
    });
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe("tool_calls");
  });

  it("puts reasoning in reasoning, or in reasoning_content with deepseek-style", async () => {
    const general = (await t.json<ChatCompletion>(PATH, { ...base, reasoning_effort: "low" })).body;
    expect(general.choices[0]!.message.reasoning).toMatch(/opening hours/);
    expect(general.choices[0]!.message.reasoning_content).toBeUndefined();
    expect(general.choices[0]!.message.content).toBe(HOURS);
    expect(general.usage.completion_tokens).toBe(
      countTokens(HOURS) + countTokens(general.choices[0]!.message.reasoning!),
    );
    const ds = dataOf<ChatCompletionChunk>(
      await t.events(PATH, {
        ...base,
        stream: true,
        reasoning_effort: "high",
        reasoning_format: "deepseek-style",
      }),
    );
    const reasoning = ds.map((c) => c.choices[0]!.delta.reasoning_content ?? "").join("");
    expect(reasoning.length).toBeGreaterThan(general.choices[0]!.message.reasoning!.length);
    expect(ds.every((c) => c.choices[0]!.delta.reasoning === undefined)).toBe(true);
    const firstContent = ds.findIndex((c) => c.choices[0]!.delta.content);
    const lastReasoning = ds.findLastIndex((c) => c.choices[0]!.delta.reasoning_content);
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  it("accepts low and high effort on svc-3.5-flash-2603", async () => {
    for (const effort of ["low", "high"]) {
      const { status } = await t.json(PATH, {
        ...base,
        model: "svc-3.5-flash-2603",
        reasoning_effort: effort,
      });
      expect(status).toBe(200);
    }
  });
});
