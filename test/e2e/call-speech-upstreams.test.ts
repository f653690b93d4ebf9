// A whole call through the real bridge whose embedded local service forwards speech to upstream
// servers (SVC_ASR_UPSTREAM, SVC_TTS_UPSTREAM) — the fake that follows OpenAI's audio API — driven by
// the Twilio simulator over real sockets. The caller's words reach the agent as the upstream
// recognized them, and everything the agent says is synthesized upstream, sentence by sentence.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { parseWav } from "../../codecs/wav.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { type FakeSpeechUpstream, startFakeSpeechUpstream } from "../fake-speech-upstream/index.ts";
import { speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

let up: FakeSpeechUpstream;
let bridge: Bridge;
let dir = "";

beforeAll(async () => {
  up = await startFakeSpeechUpstream();
  up.apiKey = "speech-key";
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-upstream-"));
  const config = twilioTestConfig(dir, {
    SVC_HOTWORDS: "Acme,Harbour",
    SVC_ASR_UPSTREAM: up.url,
    SVC_ASR_UPSTREAM_MODEL: "Systran/faster-whisper-small",
    SVC_ASR_UPSTREAM_API_KEY: "speech-key",
    SVC_TTS_UPSTREAM: `${up.url}/v1`,
    SVC_TTS_UPSTREAM_MODEL: "kokoro",
    SVC_TTS_UPSTREAM_API_KEY: "speech-key",
    SVC_TTS_UPSTREAM_VOICES: "en_female_aria=af_heart,*=am_adam",
  });
  bridge = await startTwilioTestBridge(config);
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });

it("a call: the caller's turns recognized upstream, every answer spoken upstream", async () => {
  // The fake cannot understand espeak-ng: it answers the first utterance, then the second (which
  // the session may send again in pieces while it decides whether the caller has finished).
  let n = 0;
  up.transcribe = () => (n++ === 0 ? "Where are you located?" : "That's all, goodbye.");
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    authToken: AUTH_TOKEN,
    says: [say("Where are you located?"), say("That's all, goodbye.")],
    maxSeconds: 40,
  });
  const turns = ((r.transcript as CallRecord).turns ?? []) as TurnView[];
  const user = turns.filter((x) => x.role === "user").map((x) => x.text);
  const agent = turns.filter((x): x is Extract<TurnView, { role: "assistant" }> => x.role === "assistant");
  // The upstream's words verbatim (cased and punctuated: PocketSphinx gives neither).
  expect(user).toEqual(["Where are you located?", "That's all, goodbye."]);
  expect(agent[0]?.text).toBe("Thanks for calling Acme Bikes. How can I help you?");
  expect(agent.some((a) => a.text.includes("Harbour Street"))).toBe(true);
  expect((r.transcript as CallRecord).endReason).toBe("agent: caller said goodbye");

  const asr = up.requests.filter((q) => q.path === "/v1/audio/transcriptions");
  expect(asr.length).toBeGreaterThanOrEqual(2);
  const seconds = asr.map((q) => {
    expect(q.headers.authorization).toBe("Bearer speech-key");
    expect(q.fields!.model).toEqual(["Systran/faster-whisper-small"]);
    expect(q.fields!.prompt).toEqual(["Acme, Harbour"]);
    const wav = parseWav(q.file!.bytes);
    expect(wav.sampleRate).toBe(16000);
    return wav.samples.length / 16000;
  });
  // The caller's utterances themselves, 16 kHz audio: a second or two each, or a piece of one
  // ("goodbye." after the comma's pause, with its pre-roll: about half a second).
  expect(Math.max(...seconds)).toBeGreaterThan(1);
  for (const s of seconds) expect(s).toBeGreaterThan(0.25);
  // Every sentence the agent said was one upstream request, in the voice mapped for the agent.
  const tts = up.requests.filter((q) => q.path === "/v1/audio/speech" && q.body);
  const spoken = tts.map((q) => q.body!.input);
  // (The apology is synthesized ahead, at the call's start, so that a failure never waits for it.)
  const greeting = spoken.indexOf("Thanks for calling Acme Bikes.");
  expect(greeting).toBeGreaterThanOrEqual(0);
  expect(spoken[greeting + 1]).toBe("How can I help you?");
  expect(spoken.join(" ")).toContain("Harbour Street");
  expect(new Set(tts.map((q) => q.body!.voice))).toEqual(new Set(["af_heart"]));
  expect(new Set(tts.map((q) => q.body!.response_format))).toEqual(new Set(["pcm"]));
  // And the caller heard it: audio came back for each of the agent's turns.
  expect(r.turns.every((turn) => turn.responseMs !== null)).toBe(true);
  expect(r.mediaReceived).toBeGreaterThan(100);
}, 60_000);
