// Streams opened on a signal that outlives them (a call's, for an hour) leave nothing on it once
// they end, however they end, and still stop when it aborts.
import { getEventListeners } from "node:events";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcAbortError } from "../../src/api/errors.ts";
import type { Exchange } from "../../src/api/http.ts";
import { EventStream } from "../../src/api/stream.ts";
import type { ChatCompletionChunk } from "../../src/api/types/index.ts";
import { sendJson, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();
const meta = { session_id: "asr-1", timestamp: 1700000000000 };
const chunk: ChatCompletionChunk = {
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "svc-3.7-flash",
  choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }],
};
const chat = { model: "svc-3.7-flash", messages: [{ role: "user" as const, content: "hello" }] };

describe("a stream on a longer-lived signal", () => {
  it("takes its listener off the signal when it ends, is aborted, or fails", async () => {
    t.srv.on("POST /v1/audio/asr/sse", (_r, res) =>
      sendSse(res, [{ data: { type: "transcript.text.done", meta, text: "ok" } }]),
    );
    let refuse = false;
    t.srv.on("POST /v1/chat/completions", (_r, res) =>
      refuse
        ? sendJson(res, 400, { error: { message: "bad", type: "invalid_request_error" } })
        : sendSse(res, [{ data: chunk }, { data: "[DONE]" }]),
    );
    const call = new AbortController();
    const listeners = () => getEventListeners(call.signal, "abort").length;
    for (let i = 0; i < 20; i++) {
      const upload = t.c.asr.upload(pcm16Format(16000), undefined, { signal: call.signal });
      upload.write(new Int16Array(160));
      expect(await upload.end().finalText()).toBe("ok");
      const done = await t.c.chat.stream(chat, { signal: call.signal }).finalCompletion();
      expect(done.choices[0]?.message.content).toBe("hi");
    }
    expect(listeners()).toBe(0);

    const dropped = t.c.chat.stream(chat, { signal: call.signal });
    expect(listeners()).toBe(1);
    dropped.abort();
    expect(listeners()).toBe(0);

    refuse = true;
    await expect(t.c.chat.stream(chat, { signal: call.signal }).finalCompletion()).rejects.toThrow(/bad/);
    expect(listeners()).toBe(0);
  });

  it("stops when that signal aborts, with its reason", async () => {
    t.srv.on("POST /v1/chat/completions", () => new Promise<void>(() => {})); // never answers
    const call = new AbortController();
    const stream = t.c.chat.stream(chat, { signal: call.signal });
    const read = stream.finalCompletion();
    call.abort(new SvcAbortError("call ended"));
    await expect(read).rejects.toThrow(SvcAbortError);
    expect(getEventListeners(call.signal, "abort")).toHaveLength(0);
  });

  it("keeps nothing per stream on it: 20,000 streams later the heap holds what it held", async () => {
    // AbortSignal.any() kept a FinalizationRegistry cell, two WeakRefs and an object per stream
    // for as long as the call's signal lived, and with them the stream's composite signal: 37 MB
    // for these 20,000 (and work for every full GC's pause).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const call = new AbortController();
    const refused = () => Promise.reject<Exchange>(new Error("refused"));
    const acc = { add: () => {}, result: () => undefined };
    const open = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const s = new EventStream<unknown, undefined>(refused, async function* () {}, acc, {
          signal: call.signal,
        });
        await s[Symbol.asyncIterator]()
          .next()
          .catch(() => undefined);
      }
    };
    await open(1000); // code paths compiled, pools sized
    gc();
    const before = process.memoryUsage().heapUsed;
    await open(20_000);
    gc();
    const grown = process.memoryUsage().heapUsed - before;
    expect(grown).toBeLessThan(400_000);
    expect(getEventListeners(call.signal, "abort")).toHaveLength(0);
  });
});
