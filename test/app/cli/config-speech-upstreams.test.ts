// The speech upstream settings: how the environment sets them, what a mistake says (naming the
// variable), and `voice-bridge config` telling which engine serves which endpoints.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.ts";
import { describeEngines } from "../../../src/service/index.ts";

const BIN = new URL("../../../bin/voice-bridge", import.meta.url).pathname;
const run = (env: Record<string, string>) =>
  spawnSync(BIN, ["config"], { encoding: "utf8", env: { ...process.env, ...env } });

describe("speech upstream configuration", () => {
  it("reads the SVC_ASR_UPSTREAM* and SVC_TTS_UPSTREAM* variables, the voice map as id=voice pairs", () => {
    const c = loadConfig({
      env: {
        SVC_ASR_UPSTREAM: "http://whisper:8000",
        SVC_ASR_UPSTREAM_MODEL: "Systran/faster-whisper-small",
        SVC_ASR_UPSTREAM_API_KEY: "a",
        SVC_TTS_UPSTREAM: "http://kokoro:8880/v1",
        SVC_TTS_UPSTREAM_MODEL: "kokoro",
        SVC_TTS_UPSTREAM_VOICES: "en_female_aria=af_heart, en_male_adam = am_adam,*=af_bella",
        SVC_SPEECH_UPSTREAM_TIMEOUT_MS: "5000",
      },
    });
    expect(c.local).toMatchObject({
      asrUpstream: "http://whisper:8000",
      asrUpstreamModel: "Systran/faster-whisper-small",
      asrUpstreamApiKey: "a",
      ttsUpstream: "http://kokoro:8880/v1",
      ttsUpstreamModel: "kokoro",
      ttsUpstreamVoices: { en_female_aria: "af_heart", en_male_adam: "am_adam", "*": "af_bella" },
      speechUpstreamTimeoutMs: 5000,
    });
  });

  it("names the variable at fault", () => {
    expect(() => loadConfig({ env: { SVC_ASR_UPSTREAM: "whisper:8000" } })).toThrow(
      /environment variable SVC_ASR_UPSTREAM \(local.asrUpstream\): expected an http\(s\) URL/,
    );
    expect(() => loadConfig({ env: { SVC_TTS_UPSTREAM_VOICES: "en_female_aria:af_heart" } })).toThrow(
      /environment variable SVC_TTS_UPSTREAM_VOICES \(local.ttsUpstreamVoices\): expected id=voice pairs/,
    );
    expect(() => loadConfig({ env: { SVC_SPEECH_UPSTREAM_TIMEOUT_MS: "10" } })).toThrow(
      /SVC_SPEECH_UPSTREAM_TIMEOUT_MS/,
    );
  });

  it("says which engine serves what", () => {
    expect(describeEngines(loadConfig({ env: {} }).local)).toEqual({
      "chat (E1-E3)": "embedded scripted agent",
      "speech synthesis (E4, E5)": "embedded espeak-ng",
      "speech recognition (E6)": "embedded PocketSphinx (en-us)",
      "images (E7, E8)": "embedded procedural placeholder",
    });
    const up = describeEngines(
      loadConfig({ env: { SVC_ASR_UPSTREAM: "http://w:8000", SVC_TTS_UPSTREAM: "http://k:8880/v1" } }).local,
    );
    expect(up["speech recognition (E6)"]).toBe("upstream http://w:8000/v1/audio/transcriptions");
    expect(up["speech synthesis (E4, E5)"]).toBe("upstream http://k:8880/v1/audio/speech");
  });

  it("voice-bridge config prints the engines and masks the upstream keys", () => {
    const r = run({
      SVC_ASR_UPSTREAM: "http://w:8000",
      SVC_ASR_UPSTREAM_API_KEY: "asr-secret",
      SVC_TTS_UPSTREAM_API_KEY: "tts-secret",
    });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { engines: Record<string, string>; local: Record<string, unknown> };
    expect(out.engines["speech recognition (E6)"]).toBe("upstream http://w:8000/v1/audio/transcriptions");
    expect(out.engines["speech synthesis (E4, E5)"]).toBe("embedded espeak-ng");
    expect(out.local.asrUpstreamApiKey).toBe("***");
    expect(r.stdout).not.toContain("asr-secret");
    expect(r.stdout).not.toContain("tts-secret");
  });
});
