// Talk over the greeting long enough to interrupt it, through the real bridge over real sockets
// (the Twilio simulator, the VAD, the caller-level gate), and the words decide: the embedded
// service forwards recognition to the fake that follows OpenAI's audio API, whose transcript is
// scripted. These tests need words, and the embedded PocketSphinx does not reliably hear a short
// "okay okay" (it wrote "i'm play on clay").
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { type FakeSpeechUpstream, startFakeSpeechUpstream } from "../fake-speech-upstream/index.ts";
import { speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const GREETING = "Thanks for calling Acme Bikes. How can I help you?";
const RATE = 8000;
let up: FakeSpeechUpstream;
let bridge: Bridge;
let dir = "";

beforeAll(async () => {
  up = await startFakeSpeechUpstream();
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-interruption-"));
  const config = twilioTestConfig(dir, { SVC_ASR_UPSTREAM: up.url, SVC_ASR_UPSTREAM_MODEL: "whisper-1" });
  bridge = await startTwilioTestBridge(config);
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await up?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The same sound in each test, so only its words (the upstream's transcript) differ: the caller
 * talks 1 s into the call, over the greeting, then stays silent for `tailMs`.
 */
const SOUND = "okay okay sure sure thing";

async function overTheGreeting(transcript: string, tailMs: number): Promise<CallRecord> {
  up.transcribe = () => transcript;
  const words = speak(SOUND, { rate: RATE });
  // Long enough to interrupt (bargeInConfirmMs 1000), short enough to end inside the greeting.
  expect(words.length / RATE).toBeGreaterThan(1.3);
  const samples = new Int16Array(RATE + words.length + (tailMs * RATE) / 1000);
  samples.set(words, RATE);
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    authToken: AUTH_TOKEN,
    caller: { samples, rate: RATE, label: SOUND },
    maxSeconds: 30,
  });
  return r.transcript as CallRecord;
}

const outcomes = (record: CallRecord) =>
  record.events.flatMap((e) => (e.type === "barge-in" ? [e.outcome] : []));
const agentTurns = (record: CallRecord) =>
  (record.turns as TurnView[]).filter(
    (t): t is Extract<TurnView, { role: "assistant" }> => t.role === "assistant",
  );

describe("an interruption decided by its words", () => {
  it("the greeting goes on, to its end, when they only acknowledge", async () => {
    const record = await overTheGreeting("Okay, okay. Sure, sure thing.", 6000);
    expect(outcomes(record)).toEqual(["resumed"]);
    const [greeting] = agentTurns(record);
    expect(greeting).toMatchObject({ text: GREETING, heard: GREETING, interrupted: false });
    expect(record.turns.filter((t) => t.role === "user")).toEqual([]);
  }, 60_000);

  it("the greeting stops, and the words are answered, when they ask for something", async () => {
    const record = await overTheGreeting("Wait, where are you located?", 8000);
    expect(outcomes(record)).toEqual(["interrupted"]);
    const [greeting, reply] = agentTurns(record);
    expect(greeting?.interrupted).toBe(true);
    expect(greeting?.heard.length).toBeLessThan(GREETING.length);
    expect(record.turns.filter((t) => t.role === "user").map((t) => t.text)).toEqual([
      "Wait, where are you located?",
    ]);
    expect(reply?.text).toContain("Harbour Street");
  }, 60_000);
});
