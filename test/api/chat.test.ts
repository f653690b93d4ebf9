import { describe, expect, it } from "vitest";
import { audioPart, fileRef, imagePart, textPart, videoPart } from "../../src/api/chat-parts.ts";
import {
  SvcAbortError,
  SvcStreamCutError,
  SvcStreamEventError,
  SvcValidationError,
} from "../../src/api/errors.ts";
import type { ChatCompletionChunk, ChatCompletionRequest, ChatDelta } from "../../src/api/types/index.ts";
import { type SseFrame, sendJson, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const path = "POST /v1/chat/completions";
const base = { model: "svc-3.7-flash", messages: [{ role: "user" as const, content: "weather in Paris?" }] };

function chunk(delta: ChatDelta, finish = "", usage?: ChatCompletionChunk["usage"]): SseFrame {
  const ch: ChatCompletionChunk = {
    id: "chatcmpl-9",
    object: "chat.completion.chunk",
    created: 1700000000,
    model: "svc-3.7-flash",
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  if (usage) ch.usage = usage;
  return { data: ch };
}

describe("E1 chat completions", () => {
  it("streams content and reasoning, assembles tool calls from fragments, keeps the last usage", async () => {
    const frames: SseFrame[] = [
      chunk({ role: "assistant", reasoning: "User wants " }),
      chunk({ role: "", reasoning: "weather." }),
      chunk({ content: "Let me " }),
      chunk({ content: "check." }),
      chunk({
        tool_calls: [
          { index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({
        tool_calls: [
          { index: 1, id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, "stop", { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 }),
      { data: "[DONE]" },
    ];
    t.srv.on(path, (_r, res) => sendSse(res, frames));
    const s = t.c.chat.stream(base);
    const deltas: string[] = [];
    for await (const d of s.textDeltas()) deltas.push(d);
    expect(deltas).toEqual(["Let me ", "check."]);
    const done = await s.finalCompletion();
    expect(done).toEqual({
      id: "chatcmpl-9",
      object: "chat.completion",
      model: "svc-3.7-flash",
      created: 1700000000,
      choices: [
        {
          index: 0,
          finish_reason: "stop",
          message: {
            role: "assistant",
            content: "Let me check.",
            reasoning: "User wants weather.",
            tool_calls: [
              {
                id: "call_a",
                type: "function",
                function: { name: "get_weather", arguments: '{"city":"Paris"}' },
              },
              { id: "call_b", type: "function", function: { name: "get_time", arguments: "{}" } },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 9, total_tokens: 19 },
    });
    expect(t.srv.requests[0]!.json).toMatchObject({ stream: true });
    expect(t.srv.requests[0]!.headers.accept).toBe("text/event-stream");
  });

  it("accumulates deepseek-style reasoning_content and returns the final content", async () => {
    t.srv.on(path, (_r, res) =>
      sendSse(res, [
        chunk({ reasoning_content: "think" }),
        chunk({ content: "ok" }, "stop"),
        { data: "[DONE]" },
      ]),
    );
    const s = t.c.chat.stream({ ...base, reasoning_format: "deepseek-style" });
    expect(await s.finalContent()).toBe("ok");
    expect((await s.finalCompletion()).choices[0]!.message.reasoning_content).toBe("think");
  });

  it("sends every request field and multimodal parts as given", async () => {
    t.srv.on(path, (_r, res) =>
      sendJson(res, 200, {
        id: "x",
        object: "chat.completion",
        model: "svc-3.5-flash",
        created: 1,
        choices: [{ index: 0, message: { role: "assistant", content: "{}" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const req: ChatCompletionRequest = {
      model: "svc-3.5-flash",
      messages: [
        { role: "system", content: "answer in JSON" },
        {
          role: "user",
          content: [
            textPart("what is this?"),
            imagePart({ bytes: png, format: "png" }, "high"),
            imagePart(fileRef("file-123")),
            videoPart("https://example.com/v.mp4"),
            audioPart(new Uint8Array([1, 2, 3]), "wav"),
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "look", arguments: "{}" } }],
        },
        { role: "tool", content: "a cat", tool_call_id: "call_1" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "look",
            description: "Look closer",
            parameters: { type: "object", properties: { zoom: { type: "number", description: "factor" } } },
          },
        },
      ],
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      n: 1,
      stop: ["\n\n"],
      frequency_penalty: 0.5,
      response_format: { type: "json_object" },
      reasoning_format: "general",
      reasoning_effort: "low",
    };
    const out = await t.c.chat.create(req);
    expect(out.choices[0]!.message.content).toBe("{}");
    const sent = t.srv.requests[0]!.json as ChatCompletionRequest;
    expect(sent).toEqual({ ...req, stream: false });
    const parts = (sent.messages[1] as unknown as { content: Array<Record<string, unknown>> }).content;
    expect(parts[1]).toEqual({
      type: "image_url",
      image_url: { url: "data:image/png;base64,iVBORw==", detail: "high" },
    });
    expect(parts[2]).toEqual({ type: "image_url", image_url: { url: "svcfile://file-123" } });
    expect(parts[4]).toEqual({ type: "input_audio", input_audio: { data: "data:audio/wav;base64,AQID" } });
  });

  it("checks documented limits before sending", async () => {
    const bad = [
      [{ ...base, temperature: 2.5 }, "temperature", "a number from 0 to 2"],
      [{ ...base, frequency_penalty: -1 }, "frequency_penalty", "a number from 0 to 1"],
      [
        { ...base, model: "svc-3.5-flash-2603", reasoning_effort: "medium" as const },
        "reasoning_effort",
        "one of low, high",
      ],
      [
        {
          ...base,
          tools: [
            {
              type: "function" as const,
              function: {
                name: "bad name",
                description: "",
                parameters: { type: "object" as const, properties: {} },
              },
            },
          ],
        },
        "tools[0].function.name",
        "letters, digits, _ and - only",
      ],
    ] as const;
    for (const [req, field, allowed] of bad) {
      const err = (() => {
        try {
          t.c.chat.stream(req as ChatCompletionRequest);
        } catch (e) {
          return e;
        }
      })();
      expect(err).toBeInstanceOf(SvcValidationError);
      expect(err).toMatchObject({ field, allowed });
    }
    expect(t.srv.requests).toHaveLength(0);
  });

  it("raises an in-band error event as a typed error after the deltas before it", async () => {
    t.srv.on(path, (_r, res) =>
      sendSse(res, [
        chunk({ content: "par" }),
        { data: { error: { message: "engine crashed", type: "api_error" } } },
      ]),
    );
    const got: string[] = [];
    const err = await (async () => {
      for await (const d of t.c.chat.stream(base).textDeltas()) got.push(d);
    })().catch((e: unknown) => e);
    expect(got).toEqual(["par"]);
    expect(err).toBeInstanceOf(SvcStreamEventError);
    expect(err).toMatchObject({ type: "api_error", message: "chat stream: engine crashed" });
  });

  it("reports a stream that ends cleanly but without [DONE] as cut", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, [chunk({ content: "a" })]));
    await expect(t.c.chat.stream(base).finalCompletion()).rejects.toBeInstanceOf(SvcStreamCutError);
  });

  it("abort() drops the connection mid-stream", async () => {
    let closed!: () => void;
    const serverSawClose = new Promise<void>((r) => {
      closed = r;
    });
    t.srv.on(path, async (_r, res) => {
      res.on("close", () => closed());
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(chunk({ content: "first" }).data)}\n\n`);
      // then nothing: the client must drop us
    });
    const s = t.c.chat.stream(base);
    const it = s.textDeltas();
    expect((await it.next()).value).toBe("first");
    const pending = it.next();
    s.abort();
    await expect(pending).rejects.toBeInstanceOf(SvcAbortError);
    await serverSawClose;
    expect(s.contentSoFar).toBe("first");
  });
});
