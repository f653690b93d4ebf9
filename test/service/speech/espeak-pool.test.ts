import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { levelDbfs } from "../../../codecs/pcm.ts";
import { EspeakPool } from "../../../src/service/engines/tts/espeak-pool.ts";
import { OFFICIAL_VOICES, officialVoice } from "../../../src/service/engines/tts/voices.ts";

let pool: EspeakPool;
beforeAll(async () => {
  pool = new EspeakPool({ size: 2 });
  await pool.start();
});
afterAll(() => pool.close());

async function speak(text: string, voiceId = "en_male_adam", speed = 1) {
  const chunks: Int16Array[] = [];
  await pool.synthesize({ text, voice: officialVoice(voiceId)!, speed }, (c) => chunks.push(c));
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return { pcm: out, chunks: chunks.length };
}

describe("espeak-ng worker pool", () => {
  it("announces espeak's rate and streams a sentence in several chunks", async () => {
    expect(pool.sampleRate).toBe(22050);
    const { pcm, chunks } = await speak("Thank you for calling, how can I help you today?");
    expect(chunks).toBeGreaterThan(3);
    const seconds = pcm.length / pool.sampleRate;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(6);
    expect(levelDbfs(pcm)).toBeGreaterThan(-30);
  });

  it("speaks every official voice, Chinese included", async () => {
    for (const v of OFFICIAL_VOICES) {
      const { pcm } = await speak(v.language === "zh" ? "你好，欢迎致电。" : "Hello there.", v.id);
      expect(pcm.length, v.id).toBeGreaterThan(pool.sampleRate * 0.5);
    }
  });

  it("female and male voices differ", async () => {
    const f = await speak("Hello there, how are you?", "en_female_aria");
    const m = await speak("Hello there, how are you?", "en_male_adam");
    expect(Buffer.compare(Buffer.from(f.pcm.buffer), Buffer.from(m.pcm.buffer))).not.toBe(0);
  });

  it("applies speed for real: twice as fast is about half as long", async () => {
    const text = "Your order has been shipped and will arrive tomorrow morning.";
    const slow = (await speak(text, "en_male_adam", 0.5)).pcm.length;
    const normal = (await speak(text, "en_male_adam", 1)).pcm.length;
    const fast = (await speak(text, "en_male_adam", 2)).pcm.length;
    expect(slow / normal).toBeGreaterThan(1.5);
    expect(normal / fast).toBeGreaterThan(1.5);
  });

  it("serves many requests at once, each with its own audio", async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `Request number ${i + 1}.`);
    const results = await Promise.all(texts.map((t) => speak(t)));
    for (const r of results) expect(r.pcm.length).toBeGreaterThan(pool.sampleRate * 0.5);
  });

  it("returns no audio for empty text and rejects an unknown engine voice", async () => {
    expect((await speak("   ")).pcm.length).toBe(0);
    await expect(
      pool.synthesize(
        { text: "hi", voice: { ...officialVoice("en_male_adam")!, espeak: "xx-nope" }, speed: 1 },
        () => {},
      ),
    ).rejects.toThrow(/unknown espeak voice/);
    // the worker stays usable
    expect((await speak("Still here.")).pcm.length).toBeGreaterThan(0);
  });
});
