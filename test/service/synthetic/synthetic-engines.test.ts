// The benchmark-only `synthetic` engine profile, through the real E5 and E6 protocol code of the
// local service and the project's client: speech lasts as long as the words would at the voice's
// rate, is the same every time, and every recognition gives the fixed phrase.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SvcClient } from "../../../src/api/client.ts";
import { SYNTHETIC_PHRASE } from "../../../src/service/engines/synthetic/asr.ts";
import { OFFICIAL_VOICES } from "../../../src/service/engines/tts/voices.ts";
import { type LocalService, startLocalService } from "../../../src/service/index.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-synth-"));
let svc: LocalService;
let client: SvcClient;

beforeAll(async () => {
  svc = await startLocalService({ dataDir: dir, apiKeys: ["k"], engineProfile: "synthetic" });
  client = new SvcClient({ baseURL: svc.url, apiKey: "k" });
});

afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

async function speak(text: string, rate: 8000 | 16000): Promise<Int16Array> {
  const session = await client.tts.connect({
    model: "svc-tts-2",
    voice_id: "en_female_aria",
    response_format: "pcm",
    sample_rate: rate,
    mode: "default",
  });
  session.sendText(text);
  session.flush();
  const parts: Uint8Array[] = [];
  let open = 0;
  let sentences = 0;
  let flushed = false;
  for await (const out of session) {
    if (out.type === "audio") parts.push(out.audio.slice());
    if (out.type === "flushed") flushed = true;
    if (out.type === "sentence.start") open++;
    if (out.type === "sentence.end") {
      open--;
      sentences++;
    }
    if (flushed && open === 0 && sentences > 0) break;
  }
  session.close();
  const bytes = Buffer.concat(parts);
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1);
}

const rms = (x: Int16Array) => Math.sqrt(x.reduce((s, v) => s + v * v, 0) / Math.max(1, x.length));

describe("synthetic engine profile", () => {
  it("E5: one tone burst per word at the voice's words per minute, pauses at punctuation, deterministic", async () => {
    const wpm = OFFICIAL_VOICES.find((v) => v.id === "en_female_aria")!.wpm;
    const word = Math.round((60 / wpm) * 8000);
    const pcm = await speak("Hello there, dear world.", 8000);
    // 4 words, a comma pause (120 ms) and a full stop pause (250 ms).
    expect(pcm.length).toBe(4 * word + 960 + 2000);
    const first = pcm.subarray(0, word);
    expect(rms(first.subarray(0, Math.round(word * 0.8)))).toBeGreaterThan(2000);
    expect(rms(first.subarray(Math.round(word * 0.8) + 1))).toBe(0);
    expect(rms(pcm.subarray(2 * word, 2 * word + 960))).toBe(0); // the comma pause
    expect(await speak("Hello there, dear world.", 8000)).toEqual(pcm);
  });

  it("E5: other rates go through the service's resampling, keeping the duration", async () => {
    const at8k = await speak("One two three.", 8000);
    const at16k = await speak("One two three.", 16000);
    expect(Math.abs(at16k.length - 2 * at8k.length)).toBeLessThanOrEqual(2);
  });

  it("E6: any audio is recognized as the fixed phrase", async () => {
    const noise = new Int16Array(16000).map((_, i) => Math.round(3000 * Math.sin(i / 3)));
    const result = await client.asr.recognize(
      noise,
      { type: "pcm", codec: "pcm_s16le", rate: 16000, bits: 16, channel: 1 },
      { model: "svcaudio-2.5-asr", language: "en" },
    );
    expect(result.text.toLowerCase().replace(/[^a-z ]/g, "")).toBe(SYNTHETIC_PHRASE);
  });
});
