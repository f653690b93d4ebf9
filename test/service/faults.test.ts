// The local service playing a hosted service's failures (local.faults), over real sockets and
// through real clients: the official openai and anthropic SDKs for chat, the project's client for
// recognition, a plain WebSocket for synthesis. Each kind at probability 1 on a service of its
// own, so every exchange meets it; then the seeded draws themselves.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { SvcHttpError } from "../../src/api/errors.ts";
import {
  type FaultKind,
  type FaultProfile,
  Faults,
  heldUntilGone,
  NO_FAULTS,
} from "../../src/service/conditions/index.ts";
import { startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";
import { KEY, useService } from "./helpers/service.ts";

const always = (kind: FaultKind): FaultProfile => ({ ...NO_FAULTS, [kind]: 1 });
const CHAT = { model: "svc-3.5-flash", messages: [{ role: "user" as const, content: "when are you open?" }] };
const openai = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: KEY, maxRetries: 0 });
const OVERLOADED = { type: "overloaded_error", param: null, code: "overloaded" };

describe("chat503: E1–E3 refused with 503 after the chat delay", () => {
  const t = useService({
    conditions: {
      faults: always("chat503"),
      latency: { name: "custom", asrMs: 0, chatMs: 300, ttsMs: 0, jitter: 0, seed: 1 },
    },
  });

  it("E1: the service's JSON error body, no retry-after, not before the round trip", async () => {
    const sentAt = performance.now();
    const err = await openai(t.url)
      .chat.completions.create({ ...CHAT, stream: true })
      .catch((e: unknown) => e);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(300);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const e = err as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(503);
    expect(e.error).toMatchObject({ ...OVERLOADED, message: expect.stringMatching(/overloaded/) });
    expect(e.headers?.get("retry-after") ?? null).toBeNull();
    const whole = await t.error("/v1/chat/completions", CHAT);
    expect(whole).toMatchObject({ status: 503, error: OVERLOADED });
  });

  it("E2 and E3 the same; every refusal counted", async () => {
    const before = t.svc.faults().chat503;
    const anthropic = new Anthropic({ baseURL: t.url, apiKey: KEY, maxRetries: 0 });
    const err = await anthropic.messages
      .create({ ...CHAT, max_tokens: 50 })
      .catch((e: unknown) => e as InstanceType<typeof Anthropic.APIError>);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(503);
    const r = await t.error("/v1/responses", { model: "svc-3.7-flash", input: "Hello", stream: true });
    expect(r).toMatchObject({ status: 503, error: OVERLOADED });
    expect(t.svc.faults()).toEqual({ chat503: before + 2, asr503: 0, ttsCut: 0, chatStall: 0 });
  });

  it("a request the service cannot read is still a 400, not a fault", async () => {
    const before = t.svc.faults().chat503;
    const r = await t.error("/v1/chat/completions", { model: "svc-3.5-flash" });
    expect(r.status).toBe(400);
    expect(t.svc.faults().chat503).toBe(before);
  });
});

describe("asr503: E6 refused with 503 as it arrives", () => {
  const t = useService({ engineProfile: "synthetic", conditions: { faults: always("asr503") } });

  it("the client's streamed upload gets the 503 while its body is still open", async () => {
    const client = new SvcClient({ baseURL: t.url, apiKey: KEY, maxRetries: 0 });
    const upload = client.asr.upload(pcm16Format(16000));
    upload.write(new Int16Array(3200).map((_, i) => Math.round(4000 * Math.sin(i / 4))));
    // Not ended: the caller is still speaking. The refusal comes anyway.
    const err = await upload.stream.finalResult().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcHttpError);
    expect((err as SvcHttpError).status).toBe(503);
    expect((err as SvcHttpError).body).toMatchObject({ error: OVERLOADED });
    upload.write(new Int16Array(3200)); // the rest of the speech is dropped, harmlessly
    upload.abort();
    expect(t.svc.faults().asr503).toBe(1);
    // A whole body is refused the same way.
    const whole = await client.asr
      .recognize(new Int16Array(1600), pcm16Format(16000))
      .catch((e: unknown) => e as SvcHttpError);
    expect((whole as SvcHttpError).status).toBe(503);
    expect(t.svc.faults().asr503).toBe(2);
  });
});

describe("ttsCut: an E5 session closed with 1011 right after its first audio", () => {
  for (const ttsMs of [0, 150]) {
    const t = useService({
      engineProfile: "synthetic",
      conditions: {
        faults: always("ttsCut"),
        latency: { name: "custom", asrMs: 0, chatMs: 0, ttsMs, jitter: 0, seed: 1 },
      },
    });

    it(`the first audio.delta is the last message, then the close (tts delay ${ttsMs} ms)`, async () => {
      const ws = new WebSocket(`${t.url.replace(/^http/, "ws")}/v1/realtime/audio?model=svc-tts-2`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const got: Array<{ type: string; data: { session_id: string } }> = [];
      let closed: { code: number } | undefined;
      ws.on("message", (d) => got.push(JSON.parse(String(d))));
      ws.on("close", (code) => {
        closed = { code };
      });
      await until(() => got.length >= 1, "tts.connection.done");
      const send = (type: string, data: Record<string, unknown> = {}) =>
        ws.send(JSON.stringify({ type, data: { session_id: got[0]!.data.session_id, ...data } }));
      send("tts.create", { voice_id: "en_female_aria", response_format: "pcm", sample_rate: 8000 });
      send("tts.text.delta", { text: "Hello there. How are you today? We open at nine." });
      send("tts.text.flush");
      await until(() => closed, "the server's close");
      expect(closed!.code).toBe(1011);
      const types = got.map((m) => m.type);
      expect(types.filter((x) => x === "tts.response.audio.delta")).toHaveLength(1);
      expect(types.at(-1)).toBe("tts.response.audio.delta");
      expect(types.slice(0, 2)).toEqual(["tts.connection.done", "tts.response.created"]);
      expect(types.indexOf("tts.response.sentence.start")).toBeGreaterThan(1);
      expect(t.svc.faults().ttsCut).toBe(1);
    });
  }
});

describe("chatStall: an E1 stream that sends its first words, then nothing, held open", () => {
  const t = useService({ conditions: { faults: always("chatStall") }, maxConcurrentPerKey: 1 });

  it("holds the connection until the client goes away, then lets go", async () => {
    const client = openai(t.url);
    const abort = new AbortController();
    const stream = await client.chat.completions.create({ ...CHAT, stream: true }, { signal: abort.signal });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    let ended = false;
    const reading = (async () => {
      for await (const c of stream) chunks.push(c);
      ended = true;
    })().catch((e: unknown) => e);
    await until(() => chunks.some((c) => c.choices[0]?.delta.content), "the first words");
    await until(() => t.svc.faults().chatStall === 1, "the stall");
    // Still held: the account's one generation slot is taken, so a second request is refused.
    const busy = await t.error("/v1/chat/completions", CHAT);
    expect(busy.status).toBe(429);
    expect(ended).toBe(false);
    abort.abort();
    await reading; // the SDK ends an aborted stream quietly
    const content = chunks.flatMap((c) => (c.choices[0]?.delta.content ? [c.choices[0].delta.content] : []));
    expect(content).toHaveLength(1);
    expect(chunks.some((c) => c.choices[0]?.finish_reason)).toBe(false);
    // Gone: the slot is free again, and a request that is not streamed is never stalled.
    const next = await until(async () => {
      const r = await t.json<{ choices: unknown[] }>("/v1/chat/completions", CHAT);
      return r.status === 200 && r;
    }, "the slot let go");
    expect(next.body.choices).toHaveLength(1);
    expect(t.svc.faults().chatStall).toBe(1);
  });

  it("bounds the hold when the client never goes", async () => {
    const stays = new AbortController().signal;
    const bound = 30;
    const from = performance.now();
    await heldUntilGone(stays, bound);
    expect(performance.now() - from).toBeGreaterThanOrEqual(bound - 1);
    const gone = new AbortController();
    const held = heldUntilGone(gone.signal, 60_000);
    gone.abort();
    await held;
  });
});

describe("the draws", () => {
  const p: FaultProfile = { chat503: 0.3, asr503: 0.2, ttsCut: 0.2, chatStall: 0.1, seed: 7 };
  const draws = (profile: FaultProfile, kind: FaultKind, n = 400) => {
    const f = new Faults(profile);
    return Array.from({ length: n }, () => f.meets(kind));
  };

  it("repeat for a seed, differ for another, and meet each kind about as often as asked", () => {
    expect(draws(p, "chat503")).toEqual(draws(p, "chat503"));
    expect(draws(p, "chat503")).not.toEqual(draws({ ...p, seed: 8 }, "chat503"));
    for (const kind of ["chat503", "asr503", "ttsCut", "chatStall"] as const) {
      const share = draws(p, kind, 2000).filter(Boolean).length / 2000;
      expect(Math.abs(share - p[kind])).toBeLessThan(0.05);
    }
    expect(draws(NO_FAULTS, "chat503").some(Boolean)).toBe(false);
  });

  it("are apart per kind: one kind's traffic does not shift another's", () => {
    const f = new Faults(p);
    for (let i = 0; i < 5; i++) f.meets("asr503");
    expect(Array.from({ length: 400 }, () => f.meets("chat503"))).toEqual(draws(p, "chat503"));
  });

  it("are counted only when played", () => {
    const f = new Faults(p);
    for (let i = 0; i < 50; i++) f.meets("ttsCut");
    f.played("ttsCut");
    expect(f.snapshot()).toEqual({ chat503: 0, asr503: 0, ttsCut: 1, chatStall: 0 });
  });
});

describe("the start-up log", () => {
  it("says the faults beside the timing", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "svc-faults-log-"));
    const svc = await startLocalService({
      dataDir: dir,
      apiKeys: [KEY],
      engineProfile: "synthetic",
      conditions: { faults: { ...NO_FAULTS, chat503: 0.3, ttsCut: 0.2, seed: 4 } },
      logger: pino({ level: "info" }, sink),
    });
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
    const said = lines.filter((l) => l.includes("playing a hosted service's conditions"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("faults chat503=0.3,ttsCut=0.2 seed 4");
    expect(said[0]).not.toContain("latency");
  });
});
