// E2 over HTTP: only the spec's fields, the exact event sequence (one start/stop per block,
// input_json_delta, real input tokens in message_start, stop reasons), and pings while idle.
import { describe, expect, it } from "vitest";
import type { MessagesMessage } from "../../src/api/types/index.ts";
import { countTokens } from "../../src/service/generation/tokens.ts";
import { useService } from "./helpers/service.ts";

const PATH = "/v1/messages";
const base = {
  model: "svc-3.7-flash",
  max_tokens: 200,
  messages: [{ role: "user", content: "when are you open?" }],
};
const HOURS = "We're open Monday to Friday, nine to six, and Saturday ten to four.";
const TRANSFER = {
  name: "transfer_call",
  description: "Transfers the caller",
  input_schema: { type: "object", properties: { reason: { type: "string" } } },
};

describe("E2 on the scripted engine", () => {
  const t = useService();

  it("refuses fields the spec does not list, naming them", async () => {
    for (const [field, value] of [
      ["metadata", { user_id: "u" }],
      ["tool_choice", { type: "auto" }],
      ["thinking", { type: "enabled", budget_tokens: 1024 }],
    ] as const) {
      const { status, error } = await t.error(PATH, { ...base, [field]: value });
      expect(status).toBe(400);
      expect(error.param).toBe(field);
      expect(error.code).toBe("unknown_parameter");
      expect(error.message).toMatch(/supported: model, messages, max_tokens/);
    }
    const oc = await t.error(PATH, { ...base, output_config: { effort: "low", verbosity: "high" } });
    expect(oc.error.param).toBe("output_config.verbosity");
  });

  it("validates the documented ranges", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ max_tokens: 0 }, "max_tokens"],
      [{ max_tokens: undefined }, "max_tokens"],
      [{ temperature: 2.1 }, "temperature"],
      [{ top_p: 0 }, "top_p"],
      [{ top_p: 1.01 }, "top_p"],
      [{ top_k: 501 }, "top_k"],
      [{ top_k: -1 }, "top_k"],
      [{ stop_sequences: "x" }, "stop_sequences"],
      [{ messages: [] }, "messages"],
      [{ output_config: { effort: "extreme" } }, "output_config.effort"],
      [{ model: "svc-3.5-flash-2603", output_config: { effort: "medium" } }, "output_config.effort"],
      [{ tools: [{ name: "web", type: "web_search_20250305" }] }, "tools[0].type"],
    ];
    for (const [patch, param] of cases) {
      const { status, error } = await t.error(PATH, { ...base, ...patch });
      expect(status, param).toBe(400);
      expect(error.param).toBe(param);
    }
    expect((await t.error(PATH, { ...base, model: "claude-3" })).status).toBe(404);
  });

  it("answers a message with end_turn and real token counts", async () => {
    const { status, body } = await t.json<MessagesMessage & { stop_sequence: string | null }>(PATH, base);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      type: "message",
      role: "assistant",
      model: "svc-3.7-flash",
      content: [{ type: "text", text: HOURS }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: countTokens("when are you open?") + 6, output_tokens: countTokens(HOURS) },
    });
    expect(body.id).toMatch(/^msg_/);
  });

  it("streams the exact event sequence of a text block and a tool_use block", async () => {
    const events = await t.events(PATH, {
      ...base,
      stream: true,
      system: [{ type: "text", text: "You are a phone agent." }],
      messages: [{ role: "user", content: "can I talk to a human please" }],
      tools: [TRANSFER],
    });
    for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
    const names = events.map((e) => e.event).filter((n) => n !== "ping");
    const textDeltas = names.filter(
      (n, i) => n === "content_block_delta" && i < names.indexOf("content_block_stop"),
    );
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      ...textDeltas,
      "content_block_stop",
      "content_block_start",
      ...names.slice(names.lastIndexOf("content_block_start") + 1, names.lastIndexOf("content_block_stop")),
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const data = events.map((e) => JSON.parse(e.data));
    const start = data.find((d) => d.type === "message_start");
    expect(start.message.usage.input_tokens).toBeGreaterThan(10);
    const starts = data.filter((d) => d.type === "content_block_start");
    expect(starts.map((s) => [s.index, s.content_block.type])).toEqual([
      [0, "text"],
      [1, "tool_use"],
    ]);
    expect(starts[1].content_block).toMatchObject({ name: "transfer_call", input: {} });
    const json = data
      .filter((d) => d.type === "content_block_delta" && d.index === 1)
      .map((d) => {
        expect(d.delta.type).toBe("input_json_delta");
        return d.delta.partial_json;
      })
      .join("");
    expect(JSON.parse(json)).toEqual({ reason: "caller asked for a person" });
    const text = data
      .filter((d) => d.type === "content_block_delta" && d.index === 0)
      .map((d) => d.delta.text)
      .join("");
    expect(text).toBe("Sure, let me put you through to a person.");
    const delta = data.find((d) => d.type === "message_delta");
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(delta.usage).toEqual({
      input_tokens: start.message.usage.input_tokens,
      output_tokens: expect.any(Number),
    });
    expect(delta.usage.output_tokens).toBeGreaterThan(countTokens(text));
  });

  it("ends with max_tokens when the budget runs out, and honours stop_sequences", async () => {
    const cut = await t.json<MessagesMessage>(PATH, { ...base, max_tokens: 3 });
    expect(cut.body.stop_reason).toBe("max_tokens");
    expect(cut.body.usage.output_tokens).toBe(3);
    const stopped = await t.json<MessagesMessage & { stop_sequence: string }>(PATH, {
      ...base,
      stop_sequences: ["Friday"],
    });
    expect(stopped.body.content).toEqual([{ type: "text", text: "We're open Monday to " }]);
    expect(stopped.body.stop_reason).toBe("end_turn");
    expect(stopped.body.stop_sequence).toBe("Friday");
  });

  it("answers tool_result blocks, refusing ones that answer no tool_use", async () => {
    const { body } = await t.json<MessagesMessage>(PATH, {
      ...base,
      tools: [{ ...TRANSFER, name: "lookup_order" }],
      messages: [
        { role: "user", content: "order 777 please" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "lookup_order", input: { order_id: "777" } }],
        },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_1", content: '{"status":"delivered"}' }],
        },
      ],
    });
    expect(body.content).toEqual([{ type: "text", text: "Order 777 is delivered." }]);
    const orphan = await t.error(PATH, {
      ...base,
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "{}" }] }],
    });
    expect(orphan.status).toBe(422);
  });

  it("gives JSON following output_config.format's schema", async () => {
    const schema = {
      type: "object",
      properties: { answer: { type: "string" }, confident: { type: "boolean" }, topics: { type: "array" } },
      required: ["answer", "confident", "topics"],
    };
    const { body } = await t.json<MessagesMessage>(PATH, {
      ...base,
      output_config: { format: { type: "json_schema", schema } },
    });
    const block = body.content[0] as { text: string };
    expect(JSON.parse(block.text)).toEqual({ answer: HOURS, confident: false, topics: [] });
  });
});

describe("E2 pings", () => {
  const t = useService({ chat: { paceMs: 120 }, pingIntervalMs: 40 });

  it("sends ping events while waiting between deltas", async () => {
    const events = await t.events(PATH, {
      ...base,
      stream: true,
      messages: [{ role: "user", content: "hello" }],
    });
    const names = events.map((e) => e.event);
    const firstDelta = names.indexOf("content_block_delta");
    const lastDelta = names.lastIndexOf("content_block_delta");
    expect(names.slice(firstDelta, lastDelta).filter((n) => n === "ping").length).toBeGreaterThan(0);
    expect(names[names.length - 1]).toBe("message_stop");
    expect(events.filter((e) => e.event === "ping").every((e) => JSON.parse(e.data).type === "ping")).toBe(
      true,
    );
  });
});
