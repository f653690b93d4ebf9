import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import {
  AuthenticationError,
  SvcAbortError,
  SvcTimeoutError,
  SvcValidationError,
  TtsClosedError,
  TtsResponseError,
} from "../../src/api/errors.ts";
import type { TtsOutput } from "../../src/api/tts-session.ts";
import { startServer, type TestServer } from "./helpers/server.ts";
import { type TtsScript, ttsHandler } from "./helpers/tts-server.ts";

let srv: TestServer;
let script: TtsScript;
let c: SvcClient;
beforeEach(async () => {
  srv = await startServer();
  script = { received: [], handshakes: [] };
  srv.onWs("/v1/realtime/audio", ttsHandler(script));
  c = new SvcClient({ baseURL: srv.url, apiKey: "sk-ws" });
});
afterEach(async () => {
  await srv.close();
});

const opts = {
  model: "svc-tts-2",
  voice_id: "alloy",
  response_format: "pcm" as const,
  sample_rate: 16000 as const,
};
const text = (a: Uint8Array) => Buffer.from(a).toString();

async function collect(it: AsyncIterable<TtsOutput>): Promise<TtsOutput[]> {
  const out: TtsOutput[] = [];
  for await (const o of it) out.push(o);
  return out;
}

describe("E5 TTS session", () => {
  it("connects with the bearer header, creates with the session_id, streams text in and audio out", async () => {
    const s = await c.tts.connect(opts);
    expect(s.sessionId).toBe("sess-1");
    expect(script.handshakes[0]).toEqual({
      url: "/v1/realtime/audio?model=svc-tts-2",
      authorization: "Bearer sk-ws",
    });
    expect(script.received[0]).toEqual({
      type: "tts.create",
      data: { session_id: "sess-1", voice_id: "alloy", response_format: "pcm", sample_rate: 16000 },
    });
    s.sendText("Hello the");
    s.sendText("re. How are");
    s.flush();
    s.sendText(" you");
    s.done();
    const outs = await collect(s);
    const view = outs.map((o) =>
      o.type === "audio"
        ? ["audio", text(o.audio), o.duration]
        : o.type === "done"
          ? ["done", text(o.audio)]
          : o.type === "flushed"
            ? ["flushed"]
            : [o.type, o.text],
    );
    expect(view).toEqual([
      ["sentence.start", "Hello there."],
      ["audio", "Hello ", 0.06],
      ["audio", "there.", 0.06],
      ["sentence.end", "Hello there."],
      ["flushed"],
      ["sentence.start", "How are"],
      ["audio", "How ", 0.04],
      ["audio", "are", 0.03],
      ["sentence.end", "How are"],
      ["sentence.start", "you"],
      ["audio", "yo", 0.02],
      ["audio", "u", 0.01],
      ["sentence.end", "you"],
      ["done", "Hello there.How areyou"],
    ]);
    expect(text(await s.finished)).toBe("Hello there.How areyou");
    expect(s.endReason).toBe("done");
    expect(s.state).toBe("finished");
  });

  it("accepts the older response.audio.done spelling", async () => {
    script.legacyDone = true;
    const s = await c.tts.connect(opts);
    s.sendText("One.");
    s.done();
    const events = [];
    for await (const ev of s.events()) events.push(ev.type);
    expect(events.at(-1)).toBe("response.audio.done");
    expect(text(await s.finished)).toBe("One.");
  });

  it("synthesize() speaks a whole text in sentence mode", async () => {
    expect(text(await c.tts.synthesize("A b. C d.", opts))).toBe("A b.C d.");
    expect(script.received[0]!.data).toMatchObject({ mode: "sentence" });
  });

  it("surfaces tts.response.error as TtsResponseError after the events before it", async () => {
    const s = await c.tts.connect(opts);
    s.sendText("Fine. ");
    s.sendText("OVERLOAD");
    const seen: string[] = [];
    const err = await (async () => {
      for await (const o of s) seen.push(o.type);
    })().catch((e: unknown) => e);
    expect(seen).toEqual(["sentence.start", "audio", "audio", "sentence.end"]);
    expect(err).toBeInstanceOf(TtsResponseError);
    expect(err).toMatchObject({ code: "503", details: { error: "busy" }, sessionId: "sess-1" });
    await expect(s.finished).rejects.toBeInstanceOf(TtsResponseError);
    expect(s.state).toBe("failed");
  });

  it("surfaces an unexpected close as TtsClosedError", async () => {
    const s = await c.tts.connect(opts);
    s.sendText("DROP");
    const err = await collect(s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TtsClosedError);
    expect((err as TtsClosedError).idle).toBe(false);
    expect(() => s.sendText("more")).toThrow(TtsClosedError);
  });

  it("close() drops the session at once; readers see a clean end", async () => {
    const s = await c.tts.connect(opts);
    s.sendText("Hi. And then");
    const it = s[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: "sentence.start", text: "Hi." });
    s.close();
    // Anything already queued may still be read; then the iteration ends without error.
    for (let r = await it.next(); !r.done; r = await it.next()) {
      expect(r.value.type).not.toBe("done");
    }
    expect(s.state).toBe("closed");
    expect(() => s.flush()).toThrow(TtsClosedError);
    await expect(s.finished).rejects.toBeInstanceOf(TtsClosedError);
  });

  it("knows when the server ended the session on its own (idle rule)", async () => {
    script.idleAfterMs = 30;
    const s = await c.tts.connect(opts);
    expect(s.idleClosesAt - s.lastActivityAt).toBe(60_000);
    const outs = await collect(s);
    expect(outs.map((o) => o.type)).toEqual(["done"]);
    expect(s.endReason).toBe("idle");
    const err = (() => {
      try {
        s.sendText("late");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TtsClosedError);
    expect((err as TtsClosedError).idle).toBe(true);
  });

  it("splits text over the 1,000-character limit into several deltas", async () => {
    const s = await c.tts.connect(opts);
    s.sendText("x".repeat(2500));
    s.done();
    await s.finished;
    const deltas = script.received
      .filter((e) => e.type === "tts.text.delta")
      .map((e) => (e.data as { text: string }).text.length);
    expect(deltas).toEqual([1000, 1000, 500]);
  });

  it("maps a refused handshake to the HTTP error class", async () => {
    srv.rejectWs(
      "/v1/realtime/audio",
      401,
      JSON.stringify({ error: { message: "bad key", type: "authentication_error" } }),
    );
    const err = await c.tts.connect(opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
    expect((err as AuthenticationError).message).toBe("HTTP 401: bad key");
  });

  it("checks rates, ratios and instruction rules before connecting", async () => {
    await expect(c.tts.connect({ ...opts, sample_rate: 44100 as never })).rejects.toThrow(
      "sample_rate: must be one of 8000, 16000, 22050, 24000, 48000 (got 44100)",
    );
    await expect(c.tts.connect({ ...opts, speed_ratio: 2.5 })).rejects.toBeInstanceOf(SvcValidationError);
    await expect(c.tts.connect({ ...opts, instruction: "whisper" })).rejects.toThrow(/instruction/);
    await expect(
      c.tts.connect({ ...opts, model: "svcaudio-2.5-tts", voice_label: { emotion: "Happy" } }),
    ).rejects.toThrow(/voice_label/);
    expect(script.handshakes).toHaveLength(0);
  });

  it("uses the plan tier path when planTier is set", async () => {
    srv.onWs("/svc_plan/v1/realtime/audio", ttsHandler(script));
    const p = new SvcClient({ baseURL: srv.url, apiKey: "k", planTier: true });
    const s = await p.tts.connect(opts);
    s.close();
    expect(script.handshakes[0]!.url).toBe("/svc_plan/v1/realtime/audio?model=svc-tts-2");
  });

  it("times out and aborts a connect that never gets its session", async () => {
    srv.onWs("/v1/realtime/audio", () => {
      /* accepts the socket, never sends tts.connection.done */
    });
    await expect(c.tts.connect(opts, { timeoutMs: 150 })).rejects.toBeInstanceOf(SvcTimeoutError);
    // Aborted once the service has the socket, while the client waits for its session.
    const ac = new AbortController();
    srv.onWs("/v1/realtime/audio", () => ac.abort());
    await expect(c.tts.connect(opts, { signal: ac.signal })).rejects.toBeInstanceOf(SvcAbortError);
  });
});
