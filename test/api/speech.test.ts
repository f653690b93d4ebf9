import { describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import { SvcStreamCutError, SvcStreamEventError, SvcValidationError } from "../../src/api/errors.ts";
import { bytesThrough, type SseFrame, sendJson, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const path = "POST /v1/audio/speech";
const req = { model: "svc-tts-2", input: "Hello there", voice: "alloy" };
const wav = Buffer.concat([
  Buffer.from("RIFF"),
  Buffer.alloc(4),
  Buffer.from("WAVE"),
  Buffer.from([1, 2, 3, 4]),
]);
const frames: SseFrame[] = [
  { data: { type: "speech.audio.delta", audio: wav.subarray(0, 6).toString("base64") } },
  { data: { type: "speech.audio.delta", audio: wav.subarray(6).toString("base64") } },
  { data: { type: "speech.audio.done", audio: "" } },
  { data: "[DONE]" },
];

describe("E4 speech over HTTP", () => {
  it("returns binary audio with its content type", async () => {
    t.srv.on(path, (_r, res) => {
      res.writeHead(200, { "content-type": "audio/wav" });
      res.end(wav);
    });
    const out = await t.c.speech.create({
      ...req,
      response_format: "wav",
      sample_rate: 48000,
      speed: 1.5,
      volume: 0.5,
    });
    expect(Buffer.from(out.audio).equals(wav)).toBe(true);
    expect(out.contentType).toBe("audio/wav");
    expect(t.srv.requests[0]!.json).toEqual({
      ...req,
      response_format: "wav",
      sample_rate: 48000,
      speed: 1.5,
      volume: 0.5,
      stream_format: "audio",
    });
  });

  it("streams SSE audio chunks and concatenates them", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, frames));
    const s = t.c.speech.stream(req);
    const chunks: number[] = [];
    for await (const a of s.audioChunks()) chunks.push(a.length);
    expect(chunks).toEqual([6, 10]);
    expect(Buffer.from(await s.collect()).equals(wav)).toBe(true);
    expect(t.srv.requests[0]!.json).toMatchObject({ stream_format: "sse" });
  });

  it("raises speech.audio.error", async () => {
    t.srv.on(path, (_r, res) =>
      sendSse(res, [frames[0]!, { data: { type: "speech.audio.error", message: "voice not found" } }]),
    );
    const err = await t.c.speech
      .stream(req)
      .collect()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcStreamEventError);
    expect((err as Error).message).toBe("speech stream: voice not found");
  });

  it("reports a cut stream", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, frames, { cutAfterBytes: bytesThrough(frames, 1, 10) }));
    await expect(t.c.speech.stream(req).collect()).rejects.toBeInstanceOf(SvcStreamCutError);
  });

  it("return_url answers with a URL", async () => {
    t.srv.on(path, (_r, res) => sendJson(res, 200, { url: "https://cdn.example/a.mp3", expires_in: 43200 }));
    expect(await t.c.speech.url(req)).toEqual({ url: "https://cdn.example/a.mp3", expires_in: 43200 });
    expect(t.srv.requests[0]!.json).toMatchObject({ return_url: true });
  });

  it("uses /svc_plan/v1 when planTier is set", async () => {
    t.srv.on("POST /svc_plan/v1/audio/speech", (_r, res) => sendJson(res, 200, { url: "u" }));
    await new SvcClient({ baseURL: t.srv.url, apiKey: "k", planTier: true }).speech.url(req);
    expect(t.srv.requests[0]!.path).toBe("/svc_plan/v1/audio/speech");
  });

  it("checks text length, instruction, voice_label, rate and ratios before sending", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ input: "x".repeat(1001) }, "input: must be at most 1000 characters (got 1001 characters)"],
      [
        { model: "svcaudio-2.5-tts", instruction: "y".repeat(201) },
        "instruction: must be at most 200 characters",
      ],
      [{ instruction: "calm" }, "instruction: must be used only with model svcaudio-2.5-tts"],
      [
        { model: "svcaudio-2.5-tts", voice_label: { style: "news" } },
        "voice_label: must be absent with model svcaudio-2.5-tts",
      ],
      [
        { voice_label: { style: "news", emotion: "Happy" } },
        "voice_label: must be exactly one of language, emotion, style",
      ],
      [{ sample_rate: 44100 }, "sample_rate: must be one of 8000, 16000, 22050, 24000, 48000"],
      [{ speed: 0.4 }, "speed: must be a number from 0.5 to 2"],
      [{ volume: 2.1 }, "volume: must be a number from 0.1 to 2"],
    ];
    for (const [extra, msg] of cases) {
      const err = await t.c.speech.create({ ...req, ...extra } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcValidationError);
      expect((err as Error).message).toContain(msg);
    }
    // 1,000 characters counted as characters, not UTF-16 units.
    t.srv.on(path, (_r, res) => sendJson(res, 200, { url: "u" }));
    await t.c.speech.url({ ...req, input: "🎙".repeat(1000) });
    expect(t.srv.requests).toHaveLength(1);
  });
});
