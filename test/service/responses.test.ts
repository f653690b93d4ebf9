// E3 over HTTP: the model and tool_choice limits, echoed parameters, the streamed event order with
// one gapless sequence_number, and the completed / incomplete / failed endings.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResponseObject } from "../../src/api/types/index.ts";
import { useService } from "./helpers/service.ts";
import { startUpstream, type Upstream } from "./helpers/upstream.ts";

const PATH = "/v1/responses";
const base = { model: "svc-3.7-flash", input: "when are you open?" };
const HOURS = "We're open Monday to Friday, nine to six, and Saturday ten to four.";
const ORDER_TOOL = {
  type: "function",
  name: "lookup_order",
  description: "Looks up an order",
  parameters: { type: "object", properties: { order_id: { type: "string" } } },
};

interface Ev {
  type: string;
  sequence_number: number;
  [k: string]: unknown;
}

async function stream(t: ReturnType<typeof useService>, body: Record<string, unknown>): Promise<Ev[]> {
  const events = await t.events(PATH, { ...body, stream: true });
  for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
  const data = events.map((e) => JSON.parse(e.data) as Ev);
  expect(data.map((d) => d.sequence_number)).toEqual(data.map((_, i) => i));
  return data;
}

describe("E3 on the scripted engine", () => {
  const t = useService();

  it("serves only svc-3.7-flash, only function tools, only tool_choice auto", async () => {
    let r = await t.error(PATH, { ...base, model: "svc-3.5-flash" });
    expect([r.status, r.error.param, r.error.message]).toEqual([
      400,
      "model",
      expect.stringMatching(/svc-3.7-flash/),
    ]);
    r = await t.error(PATH, { ...base, model: "nope" });
    expect(r.status).toBe(404);
    r = await t.error(PATH, { ...base, tool_choice: "required" });
    expect([r.status, r.error.param]).toEqual([400, "tool_choice"]);
    r = await t.error(PATH, { ...base, tool_choice: { type: "function", name: "x" } });
    expect(r.status).toBe(400);
    r = await t.error(PATH, { ...base, tools: [{ type: "web_search" }] });
    expect([r.status, r.error.param]).toEqual([400, "tools[0].type"]);
    for (const [patch, param] of [
      [{ temperature: 3 }, "temperature"],
      [{ max_output_tokens: 0 }, "max_output_tokens"],
      [{ reasoning: { effort: "minimal" } }, "reasoning.effort"],
      [{ text: { format: { type: "xml" } } }, "text.format.type"],
      [{ input: 42 }, "input"],
    ] as const) {
      const e = await t.error(PATH, { ...base, ...patch });
      expect([e.status, e.error.param]).toEqual([400, param]);
    }
    const ok = await t.json(PATH, { ...base, tool_choice: "auto", store: false, parallel_tool_calls: true });
    expect(ok.status).toBe(200);
  });

  it("answers a completed response that echoes the request parameters", async () => {
    const { body } = await t.json<ResponseObject>(PATH, {
      ...base,
      instructions: "Be brief.",
      temperature: 0.2,
      top_p: 0.8,
      max_output_tokens: 500,
      tools: [ORDER_TOOL],
    });
    expect(body.id).toMatch(/^resp_/);
    expect(body).toMatchObject({
      object: "response",
      status: "completed",
      error: null,
      incomplete_details: null,
      model: "svc-3.7-flash",
      instructions: "Be brief.",
      max_output_tokens: 500,
      reasoning: { effort: null, summary: null },
      temperature: 0.2,
      top_p: 0.8,
      text: { format: { type: "text" } },
      tool_choice: "auto",
      tools: [ORDER_TOOL],
    });
    expect(body.completed_at).toBeGreaterThanOrEqual(body.created_at);
    expect(body.output).toHaveLength(1);
    expect(body.output[0]).toMatchObject({
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: HOURS, annotations: [] }],
    });
    expect(body.usage!.total_tokens).toBe(body.usage!.input_tokens + body.usage!.output_tokens);
    const defaults = await t.json<ResponseObject>(PATH, base);
    expect(defaults.body).toMatchObject({
      instructions: null,
      max_output_tokens: null,
      temperature: null,
      top_p: null,
      tools: [],
    });
  });

  it("streams reasoning, message and function_call items in the full event order", async () => {
    const data = await stream(t, {
      ...base,
      input: "where is order 4242?",
      tools: [ORDER_TOOL],
      reasoning: { effort: "medium" },
    });
    const order = data.map((d) => d.type).filter((n, i, a) => !(n.endsWith(".delta") && a[i - 1] === n));
    expect(order).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.reasoning_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const created = data[0]!.response as ResponseObject;
    expect(created.status).toBe("in_progress");
    expect(created.output).toEqual([]);
    const added = data
      .filter((d) => d.type === "response.output_item.added")
      .map((d) => d.item as { id: string; type: string });
    expect(added.map((i) => [i.type, i.id.slice(0, 3)])).toEqual([
      ["reasoning", "rs_"],
      ["message", "msg"],
      ["function_call", "fc_"],
    ]);
    const args = data.find((d) => d.type === "response.function_call_arguments.done")!;
    expect(args).toMatchObject({ name: "lookup_order", output_index: 2 });
    expect(JSON.parse(args.arguments as string)).toEqual({ order_id: "4242" });
    const done = data[data.length - 1]!.response as ResponseObject;
    expect(done.status).toBe("completed");
    expect(done.output.map((o) => o.id)).toEqual(added.map((i) => i.id));
    expect(done.usage!.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    expect(done.reasoning).toEqual({ effort: "medium", summary: null });
    const text = data
      .filter((d) => d.type === "response.output_text.delta")
      .map((d) => d.delta)
      .join("");
    expect(text).toBe("Let me check order 4242.");
  });

  it("ends incomplete at max_output_tokens, possibly holding only a reasoning item", async () => {
    const data = await stream(t, { ...base, reasoning: { effort: "high" }, max_output_tokens: 6 });
    const last = data[data.length - 1]!;
    expect(last.type).toBe("response.incomplete");
    const r = last.response as ResponseObject;
    expect(r.status).toBe("incomplete");
    expect(r.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(r.output.map((o) => [o.type, o.status])).toEqual([["reasoning", "incomplete"]]);
    expect(r.usage!.output_tokens).toBe(6);
    expect(r.completed_at).toBeNull();
    expect(data.filter((d) => d.type === "response.output_item.done")).toHaveLength(1);

    const whole = await t.json<ResponseObject>(PATH, { ...base, max_output_tokens: 5 });
    expect(whole.body.status).toBe("incomplete");
    expect(whole.body.output[0]).toMatchObject({ type: "message", status: "incomplete" });
  });

  it("gives JSON in text.format json_object / json_schema", async () => {
    const obj = await t.json<ResponseObject>(PATH, { ...base, text: { format: { type: "json_object" } } });
    const text = (obj.body.output[0] as { content: { text: string }[] }).content[0]!.text;
    expect(JSON.parse(text)).toEqual({ reply: HOURS });
    const schema = {
      type: "object",
      properties: { hours: { type: "string" }, days: { type: "integer" } },
      required: ["hours", "days"],
    };
    const sch = await t.json<ResponseObject>(PATH, {
      ...base,
      text: { format: { type: "json_schema", name: "h", schema } },
    });
    const t2 = (sch.body.output[0] as { content: { text: string }[] }).content[0]!.text;
    expect(JSON.parse(t2)).toEqual({ hours: HOURS, days: 0 });
    expect(sch.body.text).toEqual({ format: { type: "json_schema", name: "h", schema } });
  });

  it("takes function_call and function_call_output items back", async () => {
    const { body } = await t.json<ResponseObject>(PATH, {
      model: "svc-3.7-flash",
      tools: [ORDER_TOOL],
      input: [
        { role: "user", content: [{ type: "input_text", text: "order 99" }] },
        { type: "function_call", call_id: "call_a", name: "lookup_order", arguments: '{"order_id":"99"}' },
        { type: "function_call_output", call_id: "call_a", output: '{"status":"on its way"}' },
      ],
    });
    expect(body.output).toHaveLength(1);
    expect((body.output[0] as { content: { text: string }[] }).content[0]!.text).toBe(
      "Order 99 is on its way.",
    );
    const orphan = await t.error(PATH, {
      ...base,
      input: [{ type: "function_call_output", call_id: "x", output: "{}" }],
    });
    expect(orphan.status).toBe(422);
  });
});

describe("E3 failures", () => {
  let up: Upstream;
  beforeAll(async () => {
    up = await startUpstream({
      deltas: [{ content: "Hello" }, { content: " there" }, { content: " friend" }],
      dieAfter: 2,
      delayMs: 10,
    });
  });
  afterAll(() => up.close());
  const t = useService(() => ({ chat: { upstream: up.url } }));

  it("streams response.failed with error filled when generation breaks mid-way", async () => {
    const data = await stream(t, base);
    const last = data[data.length - 1]!;
    expect(last.type).toBe("response.failed");
    const r = last.response as ResponseObject;
    expect(r.status).toBe("failed");
    expect(r.error).toMatchObject({
      code: "server_error",
      message: expect.stringMatching(/generation failed/),
    });
    expect(
      data
        .filter((d) => d.type === "response.output_text.delta")
        .map((d) => d.delta)
        .join(""),
    ).toBe("Hello there");
  });

  it("answers a failed response object without streaming", async () => {
    const { status, body } = await t.json<ResponseObject>(PATH, base);
    expect(status).toBe(200);
    expect(body.status).toBe("failed");
    expect(body.error).not.toBeNull();
  });
});
