import { describe, expect, it } from "vitest";
import { SvcStreamCutError, SvcStreamEventError, SvcValidationError } from "../../src/api/errors.ts";
import type {
  MessagesMessage,
  MessagesRequest,
  MessagesStreamEvent,
  MessagesUsage,
} from "../../src/api/types/index.ts";
import { bytesThrough, type SseFrame, sendJson, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const path = "POST /v1/messages";
const base = {
  model: "svc-3.5-flash",
  max_tokens: 256,
  messages: [{ role: "user" as const, content: "hi" }],
};

const frame = (ev: MessagesStreamEvent): SseFrame => ({ event: ev.type, data: ev });
const events: MessagesStreamEvent[] = [
  {
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "svc-3.5-flash",
      usage: { input_tokens: 12, output_tokens: 0 },
    },
  },
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "ping" },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Checking " } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "now." } },
  { type: "content_block_stop", index: 0 },
  {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: "toolu_1", name: "get_weather", input: {} },
  },
  {
    type: "content_block_delta",
    index: 1,
    delta: { type: "input_json_delta", partial_json: '{"city": "Pa' },
  },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'ris"}' } },
  { type: "content_block_stop", index: 1 },
  {
    type: "message_delta",
    delta: { stop_reason: "tool_use" }, // Anthropic sends only output_tokens here; the spec lists both: the client keeps input_tokens from message_start.
    usage: { output_tokens: 21 } as unknown as MessagesUsage,
  },
  { type: "message_stop" },
];

describe("E2 messages", () => {
  it("streams text deltas and assembles the final message with tool input and usage", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, events.map(frame)));
    const s = t.c.messages.stream(base);
    const texts: string[] = [];
    for await (const t of s.textDeltas()) texts.push(t);
    expect(texts).toEqual(["Checking ", "now."]);
    const m = await s.finalMessage();
    expect(m).toEqual({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "svc-3.5-flash",
      content: [
        { type: "text", text: "Checking now." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
      ],
      stop_reason: "tool_use",
      usage: { input_tokens: 12, output_tokens: 21 },
    } satisfies MessagesMessage);
    expect(t.srv.requests[0]!.json).toEqual({ ...base, stream: true });
  });

  it("non-streaming create returns the message", async () => {
    const msg: MessagesMessage = {
      id: "msg_2",
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "Hello" }],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    t.srv.on(path, (_r, res) => sendJson(res, 200, msg));
    const req: Omit<MessagesRequest, "stream"> = {
      ...base,
      system: [{ type: "text", text: "be brief" }],
      temperature: 1,
      top_p: 0.5,
      top_k: 40,
      stop_sequences: ["END"],
      output_config: { effort: "low" },
    };
    expect(await t.c.messages.create(req)).toEqual(msg);
    expect(t.srv.requests[0]!.json).toEqual(req);
  });

  it("rejects unsupported fields and out-of-range values before sending", () => {
    const cases: Array<[unknown, string]> = [
      [{ ...base, metadata: { user_id: "u" } }, "metadata"],
      [{ ...base, top_k: 501 }, "top_k"],
      [{ ...base, top_p: 0 }, "top_p"],
      [{ ...base, max_tokens: 0 }, "max_tokens"],
      [{ ...base, messages: [] }, "messages"],
    ];
    for (const [req, field] of cases) {
      expect(() => t.c.messages.stream(req as MessagesRequest)).toThrow(SvcValidationError);
      try {
        t.c.messages.stream(req as MessagesRequest);
      } catch (e) {
        expect((e as SvcValidationError).field).toBe(field);
      }
    }
    expect(t.srv.requests).toHaveLength(0);
  });

  it("raises the in-band error event", async () => {
    t.srv.on(path, (_r, res) =>
      sendSse(res, [
        frame(events[0]!),
        { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "busy" } } },
      ]),
    );
    const err = await t.c.messages
      .stream(base)
      .finalMessage()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcStreamEventError);
    expect(err).toMatchObject({ type: "overloaded_error", message: "messages stream: busy" });
  });

  it("reports a stream cut mid-event", async () => {
    const frames = events.map(frame);
    t.srv.on(path, (_r, res) => sendSse(res, frames, { cutAfterBytes: bytesThrough(frames, 4, 30) }));
    const s = t.c.messages.stream(base);
    await expect(s.finalText()).rejects.toBeInstanceOf(SvcStreamCutError);
    expect(s.textSoFar).toBe("Checking ");
  });
});
