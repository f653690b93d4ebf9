// Cloned voices end to end, through the project's client over real HTTP and WebSocket: a stored
// speech sample (E9) becomes a voice (POST /v1/audio/voices) that E4 and E5 speak with at the
// sample's pitch and pace (F0 measured here by autocorrelation, not by the service's own YIN).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import type { SvcClient } from "../../src/api/client.ts";
import { BadRequestError, NotFoundError, UnprocessableEntityError } from "../../src/api/errors.ts";
import { speak } from "../helpers/speech.ts";
import { medianF0 } from "../service/helpers/f0.ts";
import { media } from "../service/helpers/media.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor, ffmpegToPcm } from "../service/speech/helpers.ts";

const OTHER = "other-account-key";
const t = useService({ apiKeys: [KEY, OTHER] });
const client = (key = KEY): SvcClient => clientFor(t.url, key);

const RATE = 16000;
const SAMPLE_TEXT =
  "Hello, this is Sam calling about the blue bicycle I ordered last week. It has not arrived yet, could you check on it for me?";
const SAID = "Your order has shipped and will arrive on Tuesday morning.";
const LABEL = { style: "narration" } as const;

const seconds = (pcm: Int16Array) => pcm.length / RATE;
const wav = (pcm: Int16Array) => encodeWav(pcm, RATE);
const mp3 = (pcm: Int16Array) =>
  new Uint8Array(
    execFileSync(
      "ffmpeg",
      ["-v", "error", "-f", "s16le", "-ar", String(RATE), "-ac", "1", "-i", "-", "-f", "mp3", "-"],
      { input: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength) },
    ),
  );

async function upload(bytes: Uint8Array, filename: string, key = KEY): Promise<string> {
  return (await client(key).files.upload({ data: bytes, filename })).id;
}

async function cloneFrom(pcm: Int16Array, format: "wav" | "mp3" = "wav"): Promise<string> {
  expect(seconds(pcm)).toBeGreaterThanOrEqual(5);
  expect(seconds(pcm)).toBeLessThanOrEqual(10);
  const fileId = await upload(format === "wav" ? wav(pcm) : mp3(pcm), `sample.${format}`);
  const v = await client().voices.create({ file_id: fileId });
  expect(v.file_id).toBe(fileId);
  return String(v.id);
}

/** E4 as 8 kHz PCM from a WAV answer. */
async function say(voice: string, extra: Record<string, unknown> = {}): Promise<Int16Array> {
  const res = await client().speech.create({
    model: "svc-tts-2",
    input: SAID,
    voice,
    response_format: "wav",
    sample_rate: 8000,
    ...extra,
  });
  return parseWav(res.audio).samples;
}

const lowSample = () => speak(SAMPLE_TEXT, { rate: RATE, voice: "en-us", pitch: 5, wpm: 160 });
const highSample = () => speak(SAMPLE_TEXT, { rate: RATE, voice: "en-us+f4", pitch: 99, wpm: 160 });

describe("creating a cloned voice", () => {
  it("answers the new voice entry, listed for its account only", async () => {
    const fileId = await upload(wav(lowSample()), "me.wav");
    const v = await client().voices.create({ file_id: fileId });
    expect(v.id).toMatch(/^voice-[0-9a-f]{24}$/);
    expect(v.file_id).toBe(fileId);
    expect(Math.abs(v.created_at - Date.now() / 1000)).toBeLessThan(60);
    const ids = [];
    for await (const e of client().voices.iterate()) ids.push(e.id);
    expect(ids).toContain(v.id);
    expect((await client(OTHER).voices.list()).data.map((e) => e.id)).not.toContain(v.id);
  });

  it("refuses samples shorter than 5 s or longer than 10 s, naming the length", async () => {
    const pcm = lowSample();
    const short = await upload(wav(pcm.slice(0, 4 * RATE)), "short.wav");
    const long = await upload(wav(concatPcm([pcm, pcm]).slice(0, 11 * RATE)), "long.wav");
    for (const [id, len] of [
      [short, "4.00"],
      [long, "11.00"],
    ] as const) {
      const err = await client()
        .voices.create({ file_id: id })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BadRequestError);
      expect((err as BadRequestError).param).toBe("file_id");
      expect((err as Error).message).toContain(`${len} s long; voice cloning needs 5 to 10 seconds`);
    }
  });

  it("refuses what is not an mp3 or wav recording of speech", async () => {
    const png = await upload(readFileSync(media.png()), "red.png");
    await expect(client().voices.create({ file_id: png })).rejects.toThrow(/needs mp3 or wav audio; .* png/);
    const tone = execFileSync("sox", [
      "-n",
      "-r",
      "16000",
      "-b",
      "16",
      "-t",
      "wav",
      "-",
      "synth",
      "6",
      "sine",
      "200",
    ]);
    const toneId = await upload(new Uint8Array(tone), "tone.wav");
    const err = await client()
      .voices.create({ file_id: toneId })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnprocessableEntityError);
    expect((err as Error).message).toMatch(/no speech rhythm found/);
  });

  it("refuses unknown files, other accounts' files and a missing file_id", async () => {
    await expect(client().voices.create({ file_id: "file-000000000000000000000000" })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const theirs = await upload(wav(lowSample()), "theirs.wav", OTHER);
    await expect(client().voices.create({ file_id: theirs })).rejects.toBeInstanceOf(NotFoundError);
    const res = await t.post("/v1/audio/voices", {});
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("file_id");
  });
});

describe("speaking with a cloned voice", () => {
  it("E4: a low sample's clone speaks near the sample's pitch, far below the default voice", async () => {
    const sample = lowSample();
    const voice = await cloneFrom(sample);
    const sampleF0 = medianF0(ffmpegToPcm(wav(sample), 8000), 8000);
    const cloneF0 = medianF0(await say(voice, { voice_label: LABEL }), 8000);
    const defaultF0 = medianF0(await say("en_female_aria"), 8000);
    const maleF0 = medianF0(await say("en_male_adam"), 8000);
    expect(Math.abs(cloneF0 / sampleF0 - 1)).toBeLessThan(0.15);
    expect(cloneF0 / defaultF0).toBeLessThan(0.5);
    expect(cloneF0 / maleF0).toBeLessThan(0.9);
  });

  it("E4: a high sample (sent as mp3) gives a clone above the default voice's pitch", async () => {
    const sample = highSample();
    const voice = await cloneFrom(sample, "mp3");
    const sampleF0 = medianF0(ffmpegToPcm(wav(sample), 8000), 8000);
    const cloneF0 = medianF0(await say(voice, { voice_label: LABEL }), 8000);
    expect(Math.abs(cloneF0 / sampleF0 - 1)).toBeLessThan(0.15);
    expect(cloneF0 / medianF0(await say("en_female_aria"), 8000)).toBeGreaterThan(1.25);
  });

  it("E4: the clone keeps the sample's pace", async () => {
    const slowText = "I would like to know when the shop opens tomorrow morning, please.";
    const fastText = `${SAMPLE_TEXT} Also, do you sell helmets and lights for children? Thanks a lot for your help today.`;
    const slow = await cloneFrom(speak(slowText, { rate: RATE, wpm: 110 }));
    const fast = await cloneFrom(speak(fastText, { rate: RATE, wpm: 250 }));
    const slowLen = (await say(slow, { voice_label: LABEL })).length;
    const fastLen = (await say(fast, { voice_label: LABEL })).length;
    expect(slowLen / fastLen).toBeGreaterThan(1.6);
  });

  it("E5: the realtime session speaks with the clone too", async () => {
    const voice = await cloneFrom(lowSample());
    const pcm = await client().tts.synthesize(SAID, {
      model: "svc-tts-2",
      voice_id: voice,
      voice_label: LABEL,
      response_format: "pcm",
      sample_rate: 8000,
    });
    const aria = await client().tts.synthesize(SAID, {
      model: "svc-tts-2",
      voice_id: "en_female_aria",
      response_format: "pcm",
      sample_rate: 8000,
    });
    const int16 = (b: Uint8Array) =>
      new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
    expect(medianF0(int16(pcm), 8000) / medianF0(int16(aria), 8000)).toBeLessThan(0.5);
  });

  it("needs voice_label, and belongs to its account", async () => {
    const voice = await cloneFrom(lowSample());
    const noLabel = await t.post("/v1/audio/speech", { model: "svc-tts-2", input: "Hi.", voice });
    expect(noLabel.status).toBe(400);
    expect(((await noLabel.json()) as { error: { param: string } }).error.param).toBe("voice_label");
    const other = await t.post(
      "/v1/audio/speech",
      { model: "svc-tts-2", input: "Hi.", voice, voice_label: LABEL },
      OTHER,
    );
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: { message: string } }).error.message).toMatch(/no cloned voice/);
  });
});
