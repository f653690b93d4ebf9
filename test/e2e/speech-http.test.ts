// E4 POST /v1/audio/speech on the local service over real HTTP: the project's client for valid
// requests; raw HTTP for the requests the client refuses to send (server-side validation).
import { utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseWav } from "../../codecs/wav.ts";
import { officialVoice } from "../../src/service/engines/tts/voices.ts";
import { attachClonedVoices } from "../../src/service/speech/engines.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor, ffmpegToPcm, probe, rms } from "../service/speech/helpers.ts";

const t = useService();
const client = () => clientFor(t.url, KEY);
const base = { model: "svc-tts-2", voice: "en_male_adam" } as const;
const PATH = "/v1/audio/speech";

/** espeak-ng carries a little prosody state from one utterance to the next, so "the same audio"
 * means the same length within a few milliseconds, not identical samples. */
function sameSpeech(a: Int16Array, b: Int16Array): void {
  expect(Math.abs(a.length - b.length)).toBeLessThan(Math.max(a.length, b.length) * 0.01);
}

async function wav(input: string, extra: Record<string, unknown> = {}) {
  const res = await client().speech.create({
    ...base,
    input,
    response_format: "wav",
    sample_rate: 16000,
    ...extra,
  });
  return parseWav(res.audio);
}

describe("E4 speech: formats", () => {
  it("answers each format with its Content-Type and real audio", async () => {
    const expect_ = {
      mp3: ["audio/mpeg", "mp3"],
      wav: ["audio/wav", "pcm_s16le"],
      flac: ["audio/flac", "flac"],
      opus: ["audio/ogg; codecs=opus", "opus"],
    } as const;
    for (const [format, [type, codec]] of Object.entries(expect_)) {
      const res = await client().speech.create({
        ...base,
        input: "Your order has shipped.",
        response_format: format as "mp3",
      });
      expect(res.contentType, format).toBe(type);
      expect(probe(res.audio).codec, format).toBe(codec);
      const seconds = ffmpegToPcm(res.audio, 16000).length / 16000;
      expect(seconds, format).toBeGreaterThan(0.8);
      expect(seconds, format).toBeLessThan(4);
    }
  });

  it("defaults to mp3 at 24 kHz and honours every sample rate", async () => {
    const res = await client().speech.create({ ...base, input: "Hello." });
    expect(res.contentType).toBe("audio/mpeg");
    expect(probe(res.audio).rate).toBe(24000);
    for (const rate of [8000, 16000, 22050, 24000, 48000] as const) {
      const w = parseWav(
        (
          await client().speech.create({
            ...base,
            input: "Hello.",
            response_format: "wav",
            sample_rate: rate,
          })
        ).audio,
      );
      expect(w.sampleRate).toBe(rate);
      expect(w.samples.length / rate).toBeGreaterThan(0.3);
    }
  });

  it("pcm is raw 16-bit mono at the requested rate", async () => {
    const res = await client().speech.create({
      ...base,
      input: "Hello there.",
      response_format: "pcm",
      sample_rate: 8000,
    });
    expect(res.contentType).toBe("audio/pcm");
    expect(res.audio.length % 2).toBe(0);
    const ref = await wav("Hello there.", { sample_rate: 8000 });
    sameSpeech(
      new Int16Array(res.audio.buffer.slice(res.audio.byteOffset, res.audio.byteOffset + res.audio.length)),
      ref.samples,
    );
  });
});

describe("E4 speech: parameters applied", () => {
  it("speed changes the duration and volume the level", async () => {
    const text = "Please hold while I transfer your call.";
    const slow = (await wav(text, { speed: 0.5 })).samples.length;
    const fast = (await wav(text, { speed: 2 })).samples.length;
    expect(slow / fast).toBeGreaterThan(2.5);
    const loud = rms((await wav(text)).samples);
    const quiet = rms((await wav(text, { volume: 0.5 })).samples);
    expect(quiet / loud).toBeGreaterThan(0.45);
    expect(quiet / loud).toBeLessThan(0.55);
  });

  it("female, male and Chinese voices", async () => {
    const f = await wav("Good morning.", { voice: "en_female_aria" });
    const m = await wav("Good morning.", { voice: "en_male_adam" });
    expect(Buffer.from(f.samples.buffer).equals(Buffer.from(m.samples.buffer))).toBe(false);
    const zh = await wav("你好，欢迎致电客服中心。", { voice: "zh_female_mei" });
    expect(zh.samples.length / 16000).toBeGreaterThan(1);
  });

  it("svcaudio-2.5-tts does not speak text in (), other models do", async () => {
    const plain = await wav("Hello there.", { model: "svcaudio-2.5-tts" });
    const withInstr = await wav("(speak warmly) Hello there.", {
      model: "svcaudio-2.5-tts",
      instruction: "calm",
    });
    sameSpeech(withInstr.samples, plain.samples);
    const spoken = await wav("(speak warmly) Hello there.");
    expect(spoken.samples.length).toBeGreaterThan(plain.samples.length * 1.5);
  });

  it("pronunciation_map rules are applied before synthesis", async () => {
    const map = { tone: ["ETA/estimated time of arrival"] };
    const mapped = await wav("The ETA is noon.", { pronunciation_map: map });
    const said = await wav("The estimated time of arrival is noon.");
    sameSpeech(mapped.samples, said.samples);
    const unmapped = await wav("The ETA is noon.");
    expect(said.samples.length).toBeGreaterThan(unmapped.samples.length * 1.3);
  });

  it("markdown_filter speaks the text, not the syntax", async () => {
    const md = await wav("## Status\n**Shipped** on _Monday_, see [tracking](https://x.example).", {
      markdown_filter: true,
    });
    const plain = await wav("Status Shipped on Monday, see tracking.");
    sameSpeech(md.samples, plain.samples);
  });

  it("serves the deprecated svc-tts-vivid and the plan tier path", async () => {
    const vivid = await client().speech.create({
      ...base,
      model: "svc-tts-vivid",
      input: "Hi.",
      response_format: "wav",
    });
    expect(parseWav(vivid.audio).samples.length).toBeGreaterThan(0);
    const plan = await clientFor(t.url, KEY, true).speech.create({
      ...base,
      input: "Hi.",
      response_format: "wav",
    });
    sameSpeech(parseWav(plan.audio).samples, parseWav(vivid.audio).samples);
  });
});

describe("E4 speech: sse and return_url", () => {
  it("sse deltas concatenate to the full file, then done and [DONE]", async () => {
    const req = {
      ...base,
      input: "One moment please, I am looking that up.",
      response_format: "wav" as const,
    };
    const direct = (await client().speech.create(req)).audio;
    const events = await t.events(PATH, { ...req, stream_format: "sse" });
    expect(events.at(-1)!.data).toBe("[DONE]");
    const data = events.slice(0, -1).map((e) => JSON.parse(e.data) as { type: string; audio: string });
    expect(data.at(-1)).toEqual({ type: "speech.audio.done", audio: "" });
    const deltas = data.filter((d) => d.type === "speech.audio.delta");
    expect(deltas.length).toBeGreaterThan(1);
    const joined = parseWav(Buffer.concat(deltas.map((d) => Buffer.from(d.audio, "base64"))));
    sameSpeech(joined.samples, parseWav(direct).samples);
    // and through the client
    sameSpeech(parseWav(await client().speech.stream(req).collect()).samples, joined.samples);
  });

  it("sse reports a synthesis failure as speech.audio.error", async () => {
    attachClonedVoices(t.svc.ctx, (_acct, id) =>
      id === "voice-broken" ? { ...officialVoice("en_male_adam")!, espeak: "xx-no-such-voice" } : undefined,
    );
    const events = await t.events(PATH, {
      ...base,
      voice: "voice-broken",
      voice_label: { emotion: "Happy" },
      input: "Hello.",
      stream_format: "sse",
    });
    const data = events.slice(0, -1).map((e) => JSON.parse(e.data) as { type: string; message?: string });
    expect(data.map((d) => d.type)).toEqual(["speech.audio.error"]);
    expect(data[0]!.message).toMatch(/voice/);
    expect(events.at(-1)!.data).toBe("[DONE]");
  });

  it("return_url gives a URL serving the file, which 404s after 12 hours", async () => {
    const req = { ...base, input: "Your ticket number is ready.", response_format: "wav" as const };
    const { url } = await client().speech.url(req);
    expect(url).toMatch(/^http:\/\/.+\/v1\/audio\/speech\/files\/[A-Za-z0-9_-]+\.wav$/);
    const get = () => fetch(url!, { headers: { authorization: `Bearer ${KEY}` } });
    const res = await get();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    const served = parseWav(new Uint8Array(await res.arrayBuffer()));
    sameSpeech(served.samples, parseWav((await client().speech.create(req)).audio).samples);
    // Age the file past 12 hours (validity runs from its creation time).
    const file = join(t.svc.ctx.dataDir, "speech-urls", url!.split("/").pop()!);
    const old = (Date.now() - 12 * 3600 * 1000 - 1000) / 1000;
    utimesSync(file, old, old);
    const expired = await get();
    expect(expired.status).toBe(404);
    expect(((await expired.json()) as { error: { message: string } }).error.message).toMatch(/expired/);
  });
});

describe("E4 speech: validation (raw HTTP: the client refuses these before sending)", () => {
  const bad = async (body: Record<string, unknown>, param: string, re?: RegExp) => {
    const { status, error } = await t.error(PATH, { ...base, input: "Hello.", ...body });
    expect(status, JSON.stringify(body)).toBe(400);
    expect(error.param, JSON.stringify(body)).toBe(param);
    if (re) expect(error.message).toMatch(re);
  };

  it("input: required, a string, at most 1,000 characters", async () => {
    await bad({ input: undefined }, "input", /required/);
    await bad({ input: 5 }, "input");
    await bad({ input: "  " }, "input", /empty/);
    await bad({ input: "a".repeat(1001) }, "input", /1000/);
    const ok = await t.post(PATH, { ...base, input: "a ".repeat(500), response_format: "pcm" });
    expect(ok.status).toBe(200);
  });

  it("model, voice, format, rate, speed, volume, stream_format", async () => {
    await bad({ model: "gpt-4o-tts" }, "model");
    await bad({ model: undefined }, "model");
    await bad({ voice: "nobody" }, "voice", /official voices/);
    await bad({ voice: undefined }, "voice");
    await bad({ response_format: "aac" }, "response_format");
    await bad({ sample_rate: 44100 }, "sample_rate");
    await bad({ speed: 2.5 }, "speed");
    await bad({ speed: 0.4 }, "speed");
    await bad({ volume: 0 }, "volume");
    await bad({ volume: 2.1 }, "volume");
    await bad({ stream_format: "chunks" }, "stream_format");
    await bad({ stream_format: "sse", return_url: true }, "return_url");
    await bad({ markdown_filter: "yes" }, "markdown_filter");
    await bad({ pronunciation_map: { tone: ["nodelimiter"] } }, "pronunciation_map");
  });

  it("instruction: only with svcaudio-2.5-tts, at most 200 characters", async () => {
    await bad({ instruction: "calm" }, "instruction", /svcaudio-2.5-tts/);
    await bad({ model: "svcaudio-2.5-tts", instruction: "x".repeat(201) }, "instruction", /200/);
    const ok = await t.post(PATH, {
      ...base,
      model: "svcaudio-2.5-tts",
      instruction: "x".repeat(200),
      input: "Hi.",
    });
    expect(ok.status).toBe(200);
  });

  it("voice_label: not with svcaudio-2.5-tts, required for a cloned voice, one of language/emotion/style", async () => {
    attachClonedVoices(t.svc.ctx, (_acct, id) =>
      id === "voice-abc" ? officialVoice("en_female_aria") : undefined,
    );
    await bad({ model: "svcaudio-2.5-tts", voice_label: { emotion: "Happy" } }, "voice_label");
    await bad({ voice: "voice-abc" }, "voice_label", /required/);
    await bad(
      { voice: "voice-abc", voice_label: { emotion: "Happy", style: "news" } },
      "voice_label",
      /exactly one/,
    );
    await bad({ voice: "voice-abc", voice_label: { language: "Klingon" } }, "voice_label.language");
    await bad({ voice: "voice-nope", voice_label: { emotion: "Happy" } }, "voice", /no cloned voice/);
    for (const label of [{ language: "Cantonese" }, { emotion: "Happy" }, { style: "news" }]) {
      const res = await t.post(PATH, {
        ...base,
        voice: "voice-abc",
        voice_label: label,
        input: "Hi.",
        response_format: "wav",
      });
      expect(res.status, JSON.stringify(label)).toBe(200);
    }
  });

  it("needs the bearer key", async () => {
    const res = await t.post(PATH, { ...base, input: "Hi." }, "wrong-key");
    expect(res.status).toBe(401);
  });
});
