import { describe, expect, it } from "vitest";
import { SvcProtocolError, SvcStreamEventError, SvcValidationError } from "../../src/api/errors.ts";
import { outputText } from "../../src/api/responses.ts";
import type { ResponseObject, ResponsesStreamEvent } from "../../src/api/types/index.ts";
import { type SseFrame, sendJson, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const path = "POST /v1/responses";
const base = { model: "svc-3.7-flash", input: "Say hi" };

const shell: ResponseObject = {
  id: "resp_1",
  object: "response",
  created_at: 1,
  completed_at: null,
  status: "in_progress",
  error: null,
  incomplete_details: null,
  model: "svc-3.7-flash",
  output: [],
  usage: null,
  instructions: null,
  max_output_tokens: null,
  reasoning: { effort: null, summary: null },
  temperature: null,
  top_p: null,
  text: { format: { type: "text" } },
  tool_choice: "auto",
  tools: [],
};

type Body = ResponsesStreamEvent extends infer E
  ? E extends unknown
    ? Omit<E, "sequence_number">
    : never
  : never;

function sequence(bodies: Body[], from = 0): SseFrame[] {
  return bodies.map((b, i) => ({ event: String(b.type), data: { ...b, sequence_number: from + i } }));
}

const msgItem = {
  type: "message" as const,
  id: "msg_1",
  status: "in_progress",
  role: "assistant" as const,
  content: [],
};
const fcItem = {
  type: "function_call" as const,
  id: "fc_1",
  call_id: "call_1",
  name: "lookup",
  arguments: "",
  status: "in_progress",
};
const bodies = (terminal: Body[]): Body[] => [
  { type: "response.created", response: shell },
  { type: "response.in_progress", response: shell },
  {
    type: "response.output_item.added",
    output_index: 0,
    item: { type: "reasoning", id: "rs_1", summary: [], content: null, encrypted_content: null },
  },
  {
    type: "response.reasoning_part.added",
    output_index: 0,
    item_id: "rs_1",
    content_index: 0,
    part: { type: "reasoning_text", text: "" },
  },
  {
    type: "response.reasoning_text.delta",
    output_index: 0,
    item_id: "rs_1",
    content_index: 0,
    delta: "think",
  },
  { type: "response.reasoning_text.done", output_index: 0, item_id: "rs_1", content_index: 0, text: "think" },
  {
    type: "response.reasoning_part.done",
    output_index: 0,
    item_id: "rs_1",
    content_index: 0,
    part: { type: "reasoning_text", text: "think" },
  },
  { type: "response.output_item.added", output_index: 1, item: msgItem },
  {
    type: "response.content_part.added",
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", text: "", annotations: [] },
  },
  { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "Hi " },
  { type: "response.output_text.delta", item_id: "msg_1", output_index: 1, content_index: 0, delta: "there" },
  {
    type: "response.output_text.done",
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    text: "Hi there",
  },
  {
    type: "response.content_part.done",
    item_id: "msg_1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", text: "Hi there", annotations: [] },
  },
  { type: "response.output_item.added", output_index: 2, item: fcItem },
  { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '{"q":' },
  { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 2, delta: '"x"}' },
  {
    type: "response.function_call_arguments.done",
    item_id: "fc_1",
    output_index: 2,
    arguments: '{"q":"x"}',
    name: "lookup",
  },
  ...terminal,
];

describe("E3 responses", () => {
  it("streams events and returns the response carried by response.completed", async () => {
    const done: ResponseObject = {
      ...shell,
      status: "completed",
      completed_at: 2,
      output: [
        {
          type: "message",
          id: "msg_1",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: "Hi there", annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 3,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 2,
        output_tokens_details: { reasoning_tokens: 1, tool_output_tokens: 0 },
        total_tokens: 5,
      },
    };
    t.srv.on(path, (_r, res) =>
      sendSse(res, sequence(bodies([{ type: "response.completed", response: done }]))),
    );
    const s = t.c.responses.stream(base);
    const deltas: string[] = [];
    for await (const d of s.textDeltas()) deltas.push(d);
    expect(deltas).toEqual(["Hi ", "there"]);
    expect(await s.finalResponse()).toEqual(done);
    expect(outputText(done)).toBe("Hi there");
  });

  it("rebuilds the response from the events when the terminal event carries none", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, sequence(bodies([{ type: "response.incomplete" }]))));
    const r = await t.c.responses.stream(base).finalResponse();
    expect(r.status).toBe("incomplete");
    expect(r.output).toEqual([
      {
        type: "reasoning",
        id: "rs_1",
        summary: [],
        content: [{ type: "reasoning_text", text: "think" }],
        encrypted_content: null,
      },
      { ...msgItem, content: [{ type: "output_text", text: "Hi there", annotations: [] }] },
      { ...fcItem, arguments: '{"q":"x"}' },
    ]);
  });

  it("rejects a gap in sequence_number", async () => {
    const frames = sequence(bodies([{ type: "response.completed", response: shell }]));
    frames.splice(5, 1); // drop one event
    t.srv.on(path, (_r, res) => sendSse(res, frames));
    const err = await t.c.responses
      .stream(base)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcProtocolError);
    expect((err as Error).message).toMatch(/sequence_number 6 where 5 was due/);
  });

  it("raises the transport error event", async () => {
    t.srv.on(path, (_r, res) =>
      sendSse(
        res,
        sequence([
          { type: "response.created", response: shell },
          { type: "error", message: "upstream reset", code: "server_error" },
        ]),
      ),
    );
    const err = await t.c.responses
      .stream(base)
      .finalResponse()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcStreamEventError);
    expect(err).toMatchObject({ code: "server_error" });
  });

  it("non-streaming create sends the request and returns the response object", async () => {
    const failed: ResponseObject = {
      ...shell,
      status: "failed",
      error: { code: "server_error", message: "boom" },
    };
    t.srv.on(path, (_r, res) => sendJson(res, 200, failed));
    const req = {
      ...base,
      instructions: "be nice",
      temperature: 0.3,
      top_p: 0.8,
      max_output_tokens: 64,
      reasoning: { effort: "low" as const },
      tools: [{ type: "function" as const, name: "lookup", parameters: { type: "object" } }],
      tool_choice: "auto" as const,
      text: { format: { type: "text" } },
    };
    expect(await t.c.responses.create(req)).toEqual(failed);
    expect(t.srv.requests[0]!.json).toEqual({ ...req, stream: false });
  });

  it("checks tool_choice and temperature before sending", () => {
    expect(() => t.c.responses.stream({ ...base, tool_choice: { type: "function" } })).toThrow(
      SvcValidationError,
    );
    expect(() => t.c.responses.stream({ ...base, temperature: 2.01 })).toThrow(
      /temperature: must be a number from 0 to 2/,
    );
    expect(t.srv.requests).toHaveLength(0);
  });
});
