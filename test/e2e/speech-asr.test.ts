// E6 POST /v1/audio/asr/sse on the local service: the project's AsrApi client for valid requests,
// raw HTTP for the ones it refuses to send. Test audio comes from the espeak-ng command line and
// ffmpeg/sox (independent of the service's own TTS).
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor } from "../service/speech/helpers.ts";

const t = useService();
const client = () => clientFor(t.url, KEY);
const PATH = "/v1/audio/asr/sse";

const cache = new Map<string, Buffer>();
/** espeak-ng's WAV of a text (22050 Hz). */
function speechWav(text: string): Buffer {
  if (!cache.has(text)) cache.set(text, execFileSync("espeak-ng", ["-v", "en-us", "--stdout", text]));
  return cache.get(text)!;
}
function convert(wav: Buffer, args: string[]): Buffer {
  return execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-i", "pipe:0", ...args, "pipe:1"], {
    input: wav,
  });
}

const PHRASE = "i want to cancel my subscription";

describe("E6 recognition: inputs and events", () => {
  it("wav, pcm, mp3 and ogg all give the transcript", async () => {
    const wav = speechWav(PHRASE);
    const pcmStereo = convert(wav, ["-ar", "16000", "-ac", "2", "-f", "s16le"]);
    const inputs = [
      { audio: wav, format: { type: "wav" as const } },
      { audio: pcmStereo, format: pcm16Format(16000, 2) },
      { audio: convert(wav, ["-f", "mp3"]), format: { type: "mp3" as const } },
      { audio: convert(wav, ["-c:a", "libopus", "-f", "ogg"]), format: { type: "ogg" as const } },
    ];
    for (const { audio, format } of inputs) {
      const r = await client().asr.recognize(audio, format, { hotwords: ["cancel", "subscription"] });
      expect(r.text, format.type).toMatch(/subscription/);
    }
    // telephone-band pcm (8 kHz) is accepted too; the 16 kHz acoustic model hears it less well
    const narrow = convert(wav, ["-ar", "8000", "-ac", "1", "-f", "s16le"]);
    const r8 = await client().asr.recognize(narrow, pcm16Format(8000), {
      hotwords: ["cancel", "subscription"],
    });
    expect(r8.text.split(" ").length).toBeGreaterThan(1);
  });

  it("events carry meta.session_id, meta.timestamp (ms), item_id, content_index; done has text and usage", async () => {
    const before = Date.now();
    const events = await t.events(PATH, {
      audio: {
        data: speechWav("my internet is not working and the connection keeps dropping").toString("base64"),
        input: { format: { type: "wav" } },
      },
    });
    const data = events.map((e) => JSON.parse(e.data) as Record<string, unknown>);
    const done = data.at(-1)!;
    expect(done.type).toBe("transcript.text.done");
    const deltas = data.slice(0, -1);
    expect(deltas.length).toBeGreaterThan(1);
    const sessions = new Set(data.map((d) => (d.meta as { session_id: string }).session_id));
    expect(sessions.size).toBe(1);
    for (const d of data) {
      const ts = (d.meta as { timestamp: number }).timestamp;
      expect(Number.isInteger(ts)).toBe(true);
      expect(ts).toBeGreaterThanOrEqual(before);
      expect(ts).toBeLessThanOrEqual(Date.now());
    }
    for (const d of deltas) {
      expect(d).toMatchObject({ type: "transcript.text.delta", content_index: 0 });
      expect(d.item_id).toMatch(/^item_/);
      expect(d.start_time).toBeUndefined(); // timestamps only when asked for
    }
    expect(deltas.map((d) => d.delta).join("")).toBe(done.text);
    expect(done.usage).toMatchObject({ type: "realtime_asr", input_token_details: { text_tokens: 0 } });
    const u = done.usage as {
      input_tokens: number;
      output_tokens: number;
      total_tokens: number;
      input_token_details: { audio_tokens: number };
    };
    expect(u.input_token_details.audio_tokens).toBeGreaterThan(50); // 25 per second of audio
    expect(u.total_tokens).toBe(u.input_tokens + u.output_tokens);
  });

  it("enable_timestamp gives word-level start_time/end_time inside the audio", async () => {
    const wav = speechWav(PHRASE);
    const seconds = (wav.length - 44) / 2 / 22050;
    const r = await client().asr.recognize(wav, { type: "wav" }, { enable_timestamp: true });
    expect(r.deltas.length).toBeGreaterThan(2);
    let prev = 0;
    for (const d of r.deltas) {
      expect(d.delta.trim().split(" ").length).toBe(1);
      expect(d.start_time!).toBeGreaterThanOrEqual(prev);
      expect(d.end_time!).toBeGreaterThan(d.start_time!);
      expect(d.end_time!).toBeLessThanOrEqual(seconds * 1000 + 30);
      prev = d.end_time!;
    }
  });

  it("enable_itn turns spoken numbers into digits (default on)", async () => {
    const wav = speechWav("my pin is one two three four");
    const on = await client().asr.recognize(wav, { type: "wav" });
    const off = await client().asr.recognize(wav, { type: "wav" }, { enable_itn: false });
    expect(off.text).toMatch(/ one two three four$/);
    expect(on.text).toMatch(/ 1234$/);
    const age = await client().asr.recognize(speechWav("i am twenty five years old"), { type: "wav" });
    expect(age.text).toBe("i am 25 years old");
  });

  it("hotwords bias recognition", async () => {
    const wav = speechWav("i need a copy of my invoice");
    const plain = await client().asr.recognize(wav, { type: "wav" });
    const biased = await client().asr.recognize(wav, { type: "wav" }, { hotwords: ["invoice", "refund"] });
    expect(plain.text).not.toMatch(/invoice/);
    expect(biased.text).toMatch(/copy of my invoice/);
  });

  it("the three models, the legacy alias and the plan tier path are served; full_rerun_on_commit is ignored", async () => {
    const wav = speechWav("thank you");
    for (const model of ["svcaudio-2.5-asr", "svcaudio-2-asr-pro", "svc-asr-1.1-stream"]) {
      const r = await client().asr.recognize(wav, { type: "wav" }, { model });
      expect(typeof r.text, model).toBe("string");
    }
    await clientFor(t.url, KEY, true).asr.recognize(wav, { type: "wav" });
    const events = await t.events(PATH, {
      audio: {
        data: wav.toString("base64"),
        input: { format: { type: "wav" }, transcription: { full_rerun_on_commit: true } },
      },
      full_rerun_on_commit: true,
    });
    expect(JSON.parse(events.at(-1)!.data).type).toBe("transcript.text.done");
  });
});

describe("E6 recognition: errors", () => {
  const body = (
    format: Record<string, unknown>,
    transcription: Record<string, unknown> = {},
    data = speechWav("hello"),
  ) => ({
    audio: { data: data.toString("base64"), input: { format, transcription } },
  });

  it("pcm without rate, bits or channel is a 400 naming them", async () => {
    const { status, error } = await t.error(PATH, body({ type: "pcm", rate: 16000 }));
    expect(status).toBe(400);
    expect(error.message).toContain("audio.input.format.bits");
    expect(error.message).toContain("audio.input.format.channel");
    expect(error.message).not.toContain("format.rate,");
    const none = await t.error(PATH, body({ type: "pcm" }));
    expect(none.error.message).toMatch(
      /rate, audio\.input\.format\.bits, audio\.input\.format\.channel required/,
    );
  });

  it("other parameter errors are 400s", async () => {
    const cases: Array<[unknown, string]> = [
      [{}, "audio"],
      [{ audio: { input: { format: { type: "wav" } } } }, "audio.data"],
      [body({ type: "aac" }), "audio.input.format.type"],
      [body({ type: "wav" }, { model: "whisper-1" }), "audio.input.transcription.model"],
      [body({ type: "wav" }, { language: "fr" }), "audio.input.transcription.language"],
      [body({ type: "wav" }, { hotwords: "cancel" }), "audio.input.transcription.hotwords"],
      [body({ type: "wav" }, { enable_itn: "yes" }), "audio.input.transcription.enable_itn"],
      [body({ type: "pcm", rate: 16000, bits: 24, channel: 1 }), "audio.input.format.bits"],
      [{ audio: { data: "###", input: { format: { type: "wav" } } } }, "audio.data"],
    ];
    for (const [b, param] of cases) {
      const { status, error } = await t.error(PATH, b);
      expect(status, param).toBe(400);
      expect(error.param, JSON.stringify(b).slice(0, 80)).toBe(param);
    }
  });

  it("Chinese is refused with a clear error event", async () => {
    const events = await t.events(PATH, body({ type: "wav" }, { language: "zh" }));
    const ev = JSON.parse(events.at(-1)!.data);
    expect(ev.type).toBe("error");
    expect(ev.message).toMatch(/zh.*English/);
    expect(ev.meta.session_id).toMatch(/^sess_/);
    await expect(
      client().asr.recognize(speechWav("hello"), { type: "wav" }, { language: "zh" }),
    ).rejects.toThrow(/zh/);
  });

  it("audio that does not decode is an error event", async () => {
    const events = await t.events(PATH, body({ type: "mp3" }, {}, Buffer.from("definitely not audio")));
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ type: "error" });
    const wavEvents = await t.events(PATH, body({ type: "wav" }, {}, Buffer.from("RIFFxxxxWAVE")));
    expect(JSON.parse(wavEvents.at(-1)!.data).message).toMatch(/WAV/);
  });

  it("needs the bearer key", async () => {
    const res = await t.post(PATH, body({ type: "wav" }), "wrong");
    expect(res.status).toBe(401);
  });
});
