// The local service playing a hosted service's timing (local.latency), over real sockets: nothing
// of an answer reaches the client before the delay has passed since where a hosted service starts
// counting it (E6: the upload's end; E1–E4: the request; E5: every message), measured on the
// client's monotonic clock, which starts before the server's and stops after it. Only lower bounds
// and order are asserted: how much later things come is the benchmarks' business.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { Latency, type LatencyProfile, NO_LATENCY } from "../../src/service/conditions/index.ts";
import { startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";
import { KEY, useService } from "./helpers/service.ts";

const HOSTED: LatencyProfile = { name: "hosted", asrMs: 400, chatMs: 550, ttsMs: 250, jitter: 0, seed: 1 };
const hosted = useService({ engineProfile: "synthetic", conditions: { latency: HOSTED } });

const CHAT = {
  model: "svc-3.5-flash",
  messages: [{ role: "user", content: "What are your opening hours?" }],
};

/** POSTs and times the answer's head and first body bytes on this side's clock. */
async function timed(url: string, path: string, body: unknown) {
  const sentAt = performance.now();
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const headAt = performance.now();
  const reader = res.body!.getReader();
  const first = await reader.read();
  const firstAt = performance.now();
  let text = Buffer.from(first.value ?? new Uint8Array()).toString();
  for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value).toString();
  return { status: res.status, sentAt, headAt, firstAt, text };
}

interface Received {
  msg: { type: string; event_id: string; data: Record<string, unknown> };
  at: number;
}

/** An E5 session on a raw socket, every server message kept with its arrival time. */
function openTts(url: string) {
  const openedAt = performance.now();
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/realtime/audio?model=svc-tts-2`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  const got: Received[] = [];
  let closedAt: number | undefined;
  ws.on("message", (d) => got.push({ msg: JSON.parse(String(d)), at: performance.now() }));
  ws.on("close", () => {
    closedAt = performance.now();
  });
  const send = (type: string, data: Record<string, unknown>) => {
    const sessionId = got[0]!.msg.data.session_id;
    ws.send(JSON.stringify({ type, data: { session_id: sessionId, ...data } }));
    return performance.now();
  };
  return { ws, got, openedAt, send, closedAt: () => closedAt };
}

const seqOf = (r: Received) => Number(r.msg.event_id.split("_").pop());

/** The spec's order of a spoken session: each sentence's start, audio, end; all audio before done. */
function expectSessionOrder(got: Received[]): void {
  const seqs = got.map(seqOf);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set(seqs).size).toBe(seqs.length);
  const types = got.map((r) => r.msg.type);
  expect(types.slice(0, 2)).toEqual(["tts.connection.done", "tts.response.created"]);
  expect(types.at(-1)).toBe("tts.response.audio.done");
  let open = false;
  for (const t of types) {
    if (t === "tts.response.sentence.start") {
      expect(open).toBe(false);
      open = true;
    } else if (t === "tts.response.sentence.end") {
      expect(open).toBe(true);
      open = false;
    } else if (t === "tts.response.audio.delta") expect(open).toBe(true);
  }
}

async function speakAll(url: string, text: string) {
  const s = openTts(url);
  await until(() => s.got.length >= 1, "tts.connection.done");
  s.send("tts.create", { voice_id: "en_female_aria", response_format: "pcm", sample_rate: 8000 });
  await until(() => s.got.length >= 2, "tts.response.created");
  const textAt = s.send("tts.text.delta", { text });
  s.send("tts.text.done", {});
  await until(() => s.closedAt() !== undefined, "the session's close");
  return { ...s, textAt };
}

describe("local.latency: hosted timing (asr 400, chat 550, tts 250 ms)", () => {
  it("E1: the stream's head and first chunk not before chat ms after the request; a whole answer neither", async () => {
    const e1 = () =>
      hosted.svc.requests()["POST /v1/chat/completions"] ?? { requests: 0, streamed: 0, answers: 0 };
    const before = e1();
    const s = await timed(hosted.url, "/v1/chat/completions", { ...CHAT, stream: true });
    expect(s.status).toBe(200);
    expect(s.headAt - s.sentAt).toBeGreaterThanOrEqual(550);
    expect(s.firstAt - s.sentAt).toBeGreaterThanOrEqual(550);
    expect(s.text).toMatch(/^data: \{.*"chat\.completion\.chunk"/);
    expect(s.text.trimEnd().endsWith("data: [DONE]")).toBe(true);

    const whole = await timed(hosted.url, "/v1/chat/completions", CHAT);
    expect(whole.status).toBe(200);
    expect(whole.headAt - whole.sentAt).toBeGreaterThanOrEqual(550);
    expect(JSON.parse(whole.text).object).toBe("chat.completion");
    // Both were counted at the service, the streamed one as such (and as an answer to the user).
    expect(e1()).toEqual({
      requests: before.requests + 2,
      streamed: before.streamed + 1,
      answers: before.answers + 1,
    });
  });

  it("E2 and E3: their streams' first events not before chat ms after the request", async () => {
    const m = await timed(hosted.url, "/v1/messages", { ...CHAT, max_tokens: 50, stream: true });
    expect(m.status).toBe(200);
    expect(m.firstAt - m.sentAt).toBeGreaterThanOrEqual(550);
    expect(m.text.startsWith("event: message_start")).toBe(true);
    const r = await timed(hosted.url, "/v1/responses", {
      model: "svc-3.7-flash",
      input: "Hello",
      stream: true,
    });
    expect(r.status).toBe(200);
    expect(r.firstAt - r.sentAt).toBeGreaterThanOrEqual(550);
    expect(r.text.startsWith("event: response.created")).toBe(true);
  });

  it("E6: nothing of the transcript before asr ms after the upload's end", async () => {
    const client = new SvcClient({ baseURL: hosted.url, apiKey: KEY });
    const upload = client.asr.upload(pcm16Format(16000));
    const events: Array<{ type: string; at: number }> = [];
    const reading = (async () => {
      for await (const ev of upload.stream) events.push({ type: ev.type, at: performance.now() });
    })();
    const speech = new Int16Array(320).map((_, i) => Math.round(4000 * Math.sin(i / 4)));
    for (let i = 0; i < 50; i++) upload.write(speech);
    const endAt = performance.now();
    upload.end();
    await reading;
    expect(events.at(-1)?.type).toBe("transcript.text.done");
    expect(events.slice(0, -1).every((e) => e.type === "transcript.text.delta")).toBe(true);
    for (const e of events) expect(e.at - endAt).toBeGreaterThanOrEqual(400);
  });

  it("E5: every server message tts ms late, in the spec's order, the close behind them", async () => {
    const s = await speakAll(hosted.url, "Hello there. How are you today? We open at nine.");
    const [connected, created] = s.got;
    expect(connected!.at - s.openedAt).toBeGreaterThanOrEqual(250);
    expect(created!.msg.type).toBe("tts.response.created");
    // Everything after created answers the text: none of it before tts ms after the text was sent.
    for (const r of s.got.slice(2)) expect(r.at - s.textAt).toBeGreaterThanOrEqual(250);
    expect(s.got.filter((r) => r.msg.type === "tts.response.audio.delta").length).toBeGreaterThan(0);
    expectSessionOrder(s.got);
    expect(s.closedAt()!).toBeGreaterThanOrEqual(s.got.at(-1)!.at);
  });

  it("E4: the first byte not before tts ms after the request", async () => {
    const body = {
      model: "svc-tts-2",
      voice: "en_female_aria",
      input: "Hello there.",
      response_format: "wav",
    };
    const r = await timed(hosted.url, "/v1/audio/speech", body);
    expect(r.status).toBe(200);
    expect(r.headAt - r.sentAt).toBeGreaterThanOrEqual(250);
    const sse = await timed(hosted.url, "/v1/audio/speech", { ...body, stream_format: "sse" });
    expect(sse.firstAt - sse.sentAt).toBeGreaterThanOrEqual(250);
    expect(sse.text).toContain("speech.audio.done");
  });
});

describe("local.latency with jitter", () => {
  const JITTERY: LatencyProfile = { name: "custom", asrMs: 0, chatMs: 0, ttsMs: 200, jitter: 0.9, seed: 3 };
  const jittery = useService({ engineProfile: "synthetic", conditions: { latency: JITTERY } });

  it("E5 keeps the messages' order though each one's delay varies (20-380 ms)", async () => {
    const s = await speakAll(
      jittery.url,
      "One sentence here. Another one there. A third follows. Then a fourth. And the last one.",
    );
    expect(s.got.filter((r) => r.msg.type === "tts.response.sentence.start").length).toBe(5);
    expectSessionOrder(s.got);
    // The least a message can be held is (1 - jitter) of the delay.
    for (const r of s.got.slice(2)) expect(r.at - s.textAt).toBeGreaterThanOrEqual(20);
  });

  it("draws the same delays for the same seed, others for another, each within ± jitter", () => {
    const draws = (p: LatencyProfile, stage: "asr" | "chat" | "tts") => {
      const l = new Latency(p);
      return Array.from({ length: 20 }, () => l.delayMs(stage));
    };
    const p: LatencyProfile = { ...HOSTED, name: "hosted", jitter: 0.25, seed: 7 };
    expect(draws(p, "chat")).toEqual(draws(p, "chat"));
    expect(draws(p, "chat")).not.toEqual(draws({ ...p, seed: 8 }, "chat"));
    expect(new Set(draws(p, "chat")).size).toBe(20);
    for (const d of draws(p, "chat")) {
      expect(d).toBeGreaterThanOrEqual(550 * 0.75);
      expect(d).toBeLessThanOrEqual(550 * 1.25);
    }
    // Stages draw apart: the asr sequence does not shift the chat one.
    const l = new Latency(p);
    l.delayMs("asr");
    l.delayMs("asr");
    expect(l.delayMs("chat")).toBe(draws(p, "chat")[0]);
  });

  it("none waits for nothing", () => {
    const l = new Latency(NO_LATENCY);
    expect(l.active).toBe(false);
    expect(l.after("chat", performance.now())).toBeUndefined();
  });
});

describe("the start-up log", () => {
  it("says the profile once when one is set, and nothing when none is", async () => {
    for (const latency of [HOSTED, NO_LATENCY]) {
      const lines: string[] = [];
      const sink = new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      });
      const dir = mkdtempSync(join(tmpdir(), "svc-latency-log-"));
      const svc = await startLocalService({
        dataDir: dir,
        apiKeys: [KEY],
        engineProfile: "synthetic",
        conditions: { latency },
        logger: pino({ level: "info" }, sink),
      });
      await svc.close();
      rmSync(dir, { recursive: true, force: true });
      const said = lines.filter((l) => l.includes("playing a hosted service's conditions"));
      if (latency === HOSTED) {
        expect(said).toHaveLength(1);
        expect(said[0]).toContain("latency hosted: asr=400,chat=550,tts=250 ms");
      } else expect(said).toEqual([]);
    }
  });
});
