// E4, E5 and E6 served by upstream speech servers (SVC_TTS_UPSTREAM, SVC_ASR_UPSTREAM): the real
// local service against a fake that follows OpenAI's audio API to the letter (multipart parsing,
// response_format variants, chunked speech). Its speech is a tone code and its recognition reads the
// code back, so the round trip E4 → E6 only comes back word for word when the audio survived.
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { pcm16Format } from "../../src/api/asr.ts";
import type { TtsOutput } from "../../src/api/tts-session.ts";
import { PIECE_MIN_S } from "../../src/service/engines/asr/upstream.ts";
import { SPEECH_FORMATS, SPEECH_PCM_RATE } from "../../src/service/engines/openai-audio.ts";
import {
  type FakeSpeechUpstream,
  readToneCode,
  startFakeSpeechUpstream,
  toneCode,
} from "../fake-speech-upstream/index.ts";
import { KEY, useService } from "./helpers/service.ts";
import { clientFor, ffmpegToPcm } from "./speech/helpers.ts";

let up: FakeSpeechUpstream;
beforeAll(async () => {
  up = await startFakeSpeechUpstream();
  up.apiKey = "up-key";
});
afterAll(() => up.close());

const t = useService(() => ({
  speech: {
    asr: { baseUrl: up.url, model: "whisper-large-v3", apiKey: "up-key" },
    tts: {
      baseUrl: `${up.url}/v1`,
      model: "kokoro",
      apiKey: "up-key",
      voices: { en_male_adam: "am_adam", "*": "af_heart" },
    },
  },
}));
const client = () => clientFor(t.url, KEY);

const TEXT = "Hello there. How are you today?";

async function speech(body: Record<string, unknown>): Promise<Uint8Array> {
  const res = await t.post("/v1/audio/speech", {
    model: "svc-tts-2",
    voice: "en_female_aria",
    input: TEXT,
    ...body,
  });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const int16 = (b: Uint8Array) => new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
const lastRequest = (path: string) => up.requests.filter((r) => r.path === path).at(-1)!;

describe("the fake upstream itself, driven by the official openai SDK", () => {
  const sdk = () => new OpenAI({ baseURL: `${up.url}/v1`, apiKey: "up-key", maxRetries: 0 });

  it("reads its tone code back", () => {
    expect(readToneCode(toneCode(TEXT), SPEECH_PCM_RATE)).toBe(TEXT);
  });

  it("speech in every response_format, each decodable to the same words", async () => {
    for (const format of SPEECH_FORMATS) {
      const r = await sdk().audio.speech.create({
        model: "tts-1",
        voice: "alloy",
        input: "Hi there.",
        response_format: format,
      });
      const bytes = new Uint8Array(await r.arrayBuffer());
      const pcm = format === "pcm" ? int16(bytes) : ffmpegToPcm(bytes, SPEECH_PCM_RATE);
      expect(readToneCode(pcm, SPEECH_PCM_RATE), format).toBe("Hi there.");
    }
    const bad = await sdk()
      .audio.speech.create({ model: "tts-1", voice: "alloy", input: "x", response_format: "ogg" as "mp3" })
      .catch((e: Error) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it("transcriptions in every response_format, from the SDK's multipart", async () => {
    const wav = encodeWav(toneCode(TEXT), SPEECH_PCM_RATE);
    const file = () => toFile(Buffer.from(wav), "speech.wav", { type: "audio/wav" });
    const json = await sdk().audio.transcriptions.create({ file: await file(), model: "whisper-1" });
    expect(json.text).toBe(TEXT);
    const verbose = await sdk().audio.transcriptions.create({
      file: await file(),
      model: "whisper-1",
      response_format: "verbose_json",
      timestamp_granularities: ["word", "segment"],
    });
    expect(verbose.words!.map((w) => w.word)).toEqual(["Hello", "there", "How", "are", "you", "today"]);
    expect(verbose.segments!.map((x) => x.text.trim())).toEqual(["Hello there.", "How are you today?"]);
    const text = await sdk().audio.transcriptions.create({
      file: await file(),
      model: "whisper-1",
      response_format: "text",
    });
    expect(String(text).trim()).toBe(TEXT);
    const srt = await sdk().audio.transcriptions.create({
      file: await file(),
      model: "whisper-1",
      response_format: "srt",
    });
    expect(String(srt)).toMatch(/^1\n00:00:00,000 --> 00:00:00,720\nHello there\.\n/);
    const vtt = await sdk().audio.transcriptions.create({
      file: await file(),
      model: "whisper-1",
      response_format: "vtt",
    });
    expect(String(vtt)).toMatch(/^WEBVTT\n\n00:00:00\.000 --> /);
    // OpenAI refuses timestamps without verbose_json; so does the fake.
    const refused = await sdk()
      .audio.transcriptions.create({
        file: await file(),
        model: "whisper-1",
        timestamp_granularities: ["word"],
      })
      .catch((e: Error) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

describe("E4 through the speech upstream", () => {
  it("forwards model, mapped voice, speed and asks for pcm; 24 kHz pcm comes back sample for sample", async () => {
    const audio = await speech({ response_format: "pcm", sample_rate: 24000, speed: 1.25 });
    const req = lastRequest("/v1/audio/speech");
    expect(req.headers.authorization).toBe("Bearer up-key");
    expect(req.headers["content-type"]).toMatch(/^application\/json/);
    expect(req.body).toEqual({
      model: "kokoro",
      input: TEXT,
      voice: "af_heart",
      response_format: "pcm",
      speed: 1.25,
    });
    expect(int16(audio)).toEqual(toneCode(TEXT));
    await speech({ voice: "en_male_adam", response_format: "pcm" });
    expect(lastRequest("/v1/audio/speech").body!.voice).toBe("am_adam");
    // svcaudio-2.5-tts: the instruction goes as OpenAI's `instructions`, () asides are not spoken.
    await speech({
      model: "svcaudio-2.5-tts",
      input: "Hello (warmly) there.",
      instruction: "Speak warmly.",
      response_format: "pcm",
    });
    expect(lastRequest("/v1/audio/speech").body).toMatchObject({
      input: "Hello there.",
      instructions: "Speak warmly.",
    });
  });

  it("resamples and encodes in-process: wav 8 kHz and mp3 16 kHz still carry the words", async () => {
    // At 8 kHz only tones under 4 kHz survive: digits (1.1-1.6 kHz) do, most letters would not.
    const wav = parseWav(await speech({ response_format: "wav", sample_rate: 8000, input: "555 0100." }));
    expect(wav.sampleRate).toBe(8000);
    expect(readToneCode(wav.samples, 8000)).toBe("555 0100.");
    const mp3 = await speech({ response_format: "mp3", sample_rate: 16000 });
    expect(readToneCode(ffmpegToPcm(mp3, 16000), 16000)).toContain("How are you");
  });

  it("streams as SSE", async () => {
    const events = await t.events("/v1/audio/speech", {
      model: "svc-tts-2",
      voice: "en_female_aria",
      input: "Hi.",
      response_format: "pcm",
      stream_format: "sse",
    });
    const data = events
      .filter((e) => e.data !== "[DONE]")
      .map((e) => JSON.parse(e.data) as Record<string, string>);
    const deltas = data.filter((d) => d.type === "speech.audio.delta");
    const pcm = Buffer.concat(deltas.map((d) => Buffer.from(d.audio!, "base64")));
    expect(int16(pcm)).toEqual(toneCode("Hi."));
  });
});

describe("E6 through the recognition upstream", () => {
  it("round trip E4 → E6: multipart as OpenAI's, hotwords as the prompt, the upstream's text verbatim", async () => {
    const wav = await speech({ response_format: "wav", sample_rate: 16000 });
    const r = await client().asr.recognize(
      wav,
      { type: "wav" },
      { language: "en", hotwords: ["Acme", "refund"], enable_itn: true },
    );
    expect(r.text).toBe(TEXT);
    expect(r.deltas.map((d) => d.delta).join("")).toBe(TEXT);
    expect(r.deltas[0]!.start_time).toBeUndefined();
    expect(r.usage.input_token_details.audio_tokens).toBeGreaterThan(0);
    const req = lastRequest("/v1/audio/transcriptions");
    expect(req.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(req.headers.authorization).toBe("Bearer up-key");
    expect(req.fields).toEqual({
      model: ["whisper-large-v3"],
      response_format: ["json"],
      language: ["en"],
      prompt: ["Acme, refund"],
    });
    expect(req.file!.name).toBe("audio.wav");
    const sent = parseWav(req.file!.bytes);
    expect([sent.sampleRate, sent.channels]).toEqual([16000, 1]);
  });

  it("timestamps: verbose_json with segment and word granularities; one delta per segment with its times", async () => {
    const pcm = int16(await speech({ response_format: "pcm", sample_rate: 16000 }));
    const r = await client().asr.recognize(pcm, pcm16Format(16000), { enable_timestamp: true });
    const req = lastRequest("/v1/audio/transcriptions");
    expect(req.fields!.response_format).toEqual(["verbose_json"]);
    expect(req.fields!["timestamp_granularities[]"]).toEqual(["segment", "word"]);
    expect(r.deltas.map((d) => d.delta)).toEqual(["Hello there.", " How are you today?"]);
    expect(r.deltas[0]!.start_time).toBe(0);
    expect(r.deltas[1]!.start_time).toBe(r.deltas[0]!.end_time);
    expect(r.text).toBe(TEXT);
  });

  it("zh goes upstream too (the embedded recognizer is English only)", async () => {
    up.transcripts.push("你好");
    const r = await client().asr.recognize(toneCode("x"), pcm16Format(24000), { language: "zh" });
    expect(r.text).toBe("你好");
    expect(lastRequest("/v1/audio/transcriptions").fields!.language).toEqual(["zh"]);
  });

  it("a streamed upload (audio sent while the caller speaks) is forwarded when the body ends", async () => {
    const pcm = int16(await speech({ response_format: "pcm", sample_rate: 16000, input: "Streamed words." }));
    const upload = client().asr.upload(pcm16Format(16000), { hotwords: ["streamed"] });
    for (let at = 0; at < pcm.length; at += 3200) upload.write(pcm.subarray(at, at + 3200));
    const r = await upload.end().finalResult();
    expect(r.text).toBe("Streamed words.");
    expect(lastRequest("/v1/audio/transcriptions").fields!.prompt).toEqual(["streamed"]);
  });

  it("a long streamed utterance goes upstream in pieces cut at a pause, the first while audio still arrives", async () => {
    const first =
      "This first part of a long turn runs for more than eight seconds of audio (a character is 60 ms), so it is sent on its own at the pause.";
    expect(first.length * 0.06).toBeGreaterThan(PIECE_MIN_S);
    const second = "Then the rest follows.";
    const silence = new Int16Array(16000 / 2);
    const audio = [toneCode(first, 16000), silence, toneCode(second, 16000)];
    const before = up.requests.filter((r) => r.path === "/v1/audio/transcriptions" && r.complete).length;
    const upload = client().asr.upload(pcm16Format(16000), { enable_timestamp: true });
    for (const pcm of audio)
      for (let at = 0; at < pcm.length; at += 1600) upload.write(pcm.subarray(at, at + 1600));
    // The first piece is asked for before the body ends.
    await up.arrived("/v1/audio/transcriptions", before + 1);
    const r = await upload.end().finalResult();
    const sent = up.requests.filter((q) => q.path === "/v1/audio/transcriptions").slice(before);
    expect(sent).toHaveLength(2);
    expect(r.text).toBe(`${first} ${second}`);
    const last = r.deltas.at(-1)!;
    expect(last.delta).toBe(` ${second}`);
    // Times are the utterance's: the second piece starts after the first one (and its pause).
    expect(last.start_time).toBeGreaterThanOrEqual(first.length * 60);
    expect(last.start_time).toBeLessThanOrEqual(first.length * 60 + 500);
  });
});

describe("E5 through the speech upstream", () => {
  const audioPcm = (outs: TtsOutput[]) =>
    Buffer.concat(
      outs.filter((o): o is Extract<TtsOutput, { type: "audio" }> => o.type === "audio").map((o) => o.audio),
    );

  it("sentences requested as soon as each is complete, played strictly in order", async () => {
    let release!: () => void;
    up.holdSpeech = new Promise<void>((r) => {
      release = r;
    });
    const before = up.requests.filter((r) => r.path === "/v1/audio/speech" && r.complete).length;
    const s = await client().tts.connect({
      model: "svc-tts-2",
      voice_id: "en_female_aria",
      response_format: "pcm",
      sample_rate: 24000,
      mode: "sentence",
    });
    s.sendText("First one. Second one. Third");
    // Two complete sentences: both are asked for while the first one's answer is still held.
    await up.arrived("/v1/audio/speech", before + 2);
    up.holdSpeech = undefined;
    release();
    s.flush(); // the rest ("Third") goes at flush, as before
    s.done();
    const outs: TtsOutput[] = [];
    for await (const o of s) outs.push(o);
    const starts = outs.filter((o) => o.type === "sentence.start").map((o) => (o as { text: string }).text);
    expect(starts).toEqual(["First one.", "Second one.", "Third"]);
    expect(int16(audioPcm(outs))).toEqual(toneCode("First one.Second one.Third"));
  });

  it("default mode: nothing until a sentence is complete; flush releases the rest", async () => {
    const before = up.requests.filter((r) => r.path === "/v1/audio/speech").length;
    const s = await client().tts.connect({
      model: "svc-tts-2",
      voice_id: "en_female_aria",
      response_format: "pcm",
      sample_rate: 16000,
    });
    s.sendText("no punctuation here");
    s.flush();
    s.done();
    const outs: TtsOutput[] = [];
    for await (const o of s) outs.push(o);
    const bodies = up.requests.filter((r) => r.path === "/v1/audio/speech").slice(before);
    expect(bodies.map((r) => r.body!.input)).toEqual(["no punctuation here"]);
    expect(readToneCode(int16(audioPcm(outs)), 16000)).toBe("no punctuation here");
  });
});
