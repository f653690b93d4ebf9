import { describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { AsrError, SvcStreamCutError, SvcValidationError } from "../../src/api/errors.ts";
import type { AsrRequest, AsrStreamEvent } from "../../src/api/types/index.ts";
import { bytesThrough, type Recorded, type SseFrame, sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const path = "POST /v1/audio/asr/sse";
const meta = { session_id: "asr-1", timestamp: 1700000000000 };
const usage = {
  type: "realtime_asr" as const,
  input_tokens: 50,
  input_token_details: { text_tokens: 0, audio_tokens: 50 },
  output_tokens: 3,
  total_tokens: 53,
};

/** "Recognizes" by reporting how many bytes of audio arrived, so the test sees the audio got through intact. */
function transcriber(req: Recorded): SseFrame[] {
  const body = req.json as AsrRequest;
  const n = Buffer.from(body.audio.data, "base64").length;
  const evs: AsrStreamEvent[] = [
    {
      type: "transcript.text.delta",
      meta,
      delta: "got ",
      item_id: "item_1",
      content_index: 0,
      start_time: 0,
      end_time: 200,
    },
    { type: "transcript.text.delta", meta, delta: `${n} bytes` },
    { type: "transcript.text.done", meta, text: `got ${n} bytes`, usage },
  ];
  return evs.map((e) => ({ data: e }));
}

describe("E6 recognition", () => {
  it("submits 16-bit PCM with its format fields and returns the final text and usage", async () => {
    t.srv.on(path, (r, res) => sendSse(res, transcriber(r)));
    const pcm = new Int16Array([0, 1, -1, 32767, -32768]);
    const out = await t.c.asr.recognize(pcm, pcm16Format(16000), {
      language: "en",
      hotwords: ["Paris"],
      model: "svcaudio-2.5-asr",
      enable_timestamp: true,
    });
    expect(out.text).toBe("got 10 bytes");
    expect(out.usage).toEqual(usage);
    expect(out.sessionId).toBe("asr-1");
    expect(out.deltas[0]).toMatchObject({ start_time: 0, end_time: 200 });
    const sent = t.srv.requests[0]!;
    expect(sent.headers.accept).toBe("text/event-stream");
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.headers.authorization).toBe("Bearer k");
    const body = sent.json as AsrRequest;
    expect(Buffer.from(body.audio.data, "base64")).toEqual(
      Buffer.from([0, 0, 1, 0, 0xff, 0xff, 0xff, 0x7f, 0x00, 0x80]),
    );
    expect(body.audio.input).toEqual({
      transcription: {
        language: "en",
        hotwords: ["Paris"],
        model: "svcaudio-2.5-asr",
        enable_timestamp: true,
      },
      format: { type: "pcm", codec: "pcm_s16le", rate: 16000, bits: 16, channel: 1 },
    });
  });

  it("accepts Base64 text and file bytes, and streams text deltas", async () => {
    t.srv.on(path, (r, res) => sendSse(res, transcriber(r)));
    expect((await t.c.asr.recognize(Buffer.from("abc").toString("base64"), { type: "wav" })).text).toBe(
      "got 3 bytes",
    );
    const s = t.c.asr.stream(new Uint8Array(7), { type: "ogg" });
    const deltas: string[] = [];
    for await (const d of s.textDeltas()) deltas.push(d);
    expect(deltas).toEqual(["got ", "7 bytes"]);
    expect(await s.finalText()).toBe("got 7 bytes");
    expect((t.srv.requests[1]!.json as AsrRequest).audio.input).toEqual({ format: { type: "ogg" } });
  });

  it("turns the error event into AsrError", async () => {
    t.srv.on(path, (_r, res) => sendSse(res, [{ data: { type: "error", meta, message: "audio too long" } }]));
    const err = await t.c.asr.recognize(new Uint8Array(4), { type: "mp3" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AsrError);
    expect(err).toMatchObject({ sessionId: "asr-1", message: "asr stream: audio too long" });
  });

  it("reports a stream cut before transcript.text.done", async () => {
    t.srv.on(path, (r, res) => {
      const frames = transcriber(r);
      return sendSse(res, frames, { cutAfterBytes: bytesThrough(frames, 2, 15) });
    });
    const s = t.c.asr.stream(new Uint8Array(2), { type: "wav" });
    await expect(s.finalResult()).rejects.toBeInstanceOf(SvcStreamCutError);
    expect(s.textSoFar).toBe("got 2 bytes");
  });

  it("requires rate, bits and channel for pcm, before sending", () => {
    expect(() =>
      t.c.asr.stream(new Uint8Array(2), { type: "pcm", codec: "pcm_s16le", bits: 16, channel: 1 }),
    ).toThrow(SvcValidationError);
    expect(() => t.c.asr.stream(new Uint8Array(2), { type: "flac" as never })).toThrow(
      /audio.input.format.type: must be one of ogg, mp3, wav, pcm/,
    );
    expect(t.srv.requests).toHaveLength(0);
  });

  it("uses the plan tier path when planTier is set", async () => {
    t.srv.on("POST /svc_plan/v1/audio/asr/sse", (r, res) => sendSse(res, transcriber(r)));
    const p = new SvcClient({ baseURL: t.srv.url, apiKey: "k", planTier: true });
    expect((await p.asr.recognize(new Uint8Array(1), { type: "wav" })).text).toBe("got 1 bytes");
  });
});
