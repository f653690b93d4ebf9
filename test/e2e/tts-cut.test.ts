// A call through the real bridge whose embedded local service closes half of its E5 sessions
// (1011) right after their first audio (SVC_LOCAL_FAULTS ttsCut), driven by the Twilio simulator
// over real sockets. What the caller hears must not show it: every reply whole, as much sound in it
// as in the same words synthesized by a service that cuts nothing (no piece heard twice, none
// lost), and no reply given up for the apology. The seed is one whose draws never cut two sessions in a row: the
// session that replaces a cut one is whole, so every cut is taken up at the first reopen.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { SvcClient } from "../../src/api/client.ts";
import type { Config } from "../../src/config/config.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { type SimResult, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { loudMs, speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

/** Draws of seed 162 at 0.5, one per E5 session in the order they connect: 1 = cut. */
const FAULTS = "ttsCut=0.5,seed=162"; // 100100101010100100010100…
const REOPENED = "TTS session cut mid-reply: reopening it for the rest";
/** Twilio's audio: 8 kHz, samples per ms. */
const PER_MS = 8;
/** How far the sound heard of a reply may be from the uncut one's (the engine's own variation), ms. */
const SOUND_SLACK_MS = 25;

let bridge: Bridge;
let config: Config;
let reference: LocalService;
let dir: string;
const lines: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-tts-cut-"));
  config = twilioTestConfig(join(dir, "bridge"), { SVC_LOCAL_FAULTS: FAULTS });
  // The bridge's log lines, kept to count the reopened sessions (E2E_LOG prints them as well).
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
  bridge = await startTwilioTestBridge(
    config,
    {},
    process.env.E2E_LOG ? pino({ level: process.env.E2E_LOG }) : log,
  );
  reference = await startLocalService({ dataDir: join(dir, "reference"), apiKeys: ["ref-key"] });
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await reference?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The words as the caller would hear them from a session that is never cut (through µ-law, as Twilio carries them). */
async function uncut(text: string): Promise<Int16Array> {
  const client = new SvcClient({ baseURL: reference.url, apiKey: "ref-key", maxRetries: 0 });
  const session = await client.tts.connect({
    model: config.service.ttsModel,
    voice_id: config.service.voice,
    response_format: "pcm",
    sample_rate: 8000,
    mode: "default",
  });
  session.sendText(text);
  session.flush();
  session.done();
  const all = await session.finished;
  return mulawDecode(mulawEncode(new Int16Array(all.buffer, all.byteOffset, all.byteLength / 2)));
}

/** What the caller heard of the agent in each stretch between their own turns (the replies). */
function heardPerReply(r: SimResult): Int16Array[] {
  const bounds = [0, ...r.turns.flatMap((t) => [t.startMs, t.endMs]), Number.POSITIVE_INFINITY];
  const replies: Int16Array[] = [];
  for (let i = 0; i < bounds.length; i += 2) {
    const [from, to] = [bounds[i]!, Math.min(bounds[i + 1]!, r.agentAudio.length / PER_MS)];
    replies.push(r.agentAudio.subarray(from * PER_MS, to * PER_MS));
  }
  return replies;
}

describe("a call whose TTS sessions are cut mid-reply", () => {
  it("hears every reply whole, once: as much sound as the uncut reply, nothing given up", async () => {
    const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      says: [say("What are your opening hours?"), say("Where are you located?"), say("Thank you.")],
      maxSeconds: 60,
    });
    const turns = ((r.transcript as CallRecord | undefined)?.turns ?? []) as TurnView[];
    const replies = turns.filter(
      (t): t is Extract<TurnView, { role: "assistant" }> => t.role === "assistant",
    );
    // The caller took three turns, each answered: the greeting and three replies, none interrupted.
    expect(r.turns).toHaveLength(3);
    // On an overloaded machine recognition may miss its deadline: the apology then stands in for a
    // reply and the turn is not filed (right for the bridge, not what this test is about).
    const story = turns.map(
      (t) => `${t.role}: ${t.text}${t.role === "assistant" && t.error ? ` (${t.error})` : ""}`,
    );
    expect(
      turns.map((t) => t.role),
      story.join(" | "),
    ).toEqual(["assistant", "user", "assistant", "user", "assistant", "user", "assistant"]);
    const cuts = bridge.localService!.faults().ttsCut;
    const reopens = lines.filter((l) => l.includes(REOPENED)).length;
    expect(cuts).toBeGreaterThanOrEqual(2); // the service did cut sessions that were speaking…
    expect(reopens).toBeGreaterThanOrEqual(1); // …some of them mid-reply (others: the apology's, kept ready)
    const heard = heardPerReply(r);
    for (const [i, reply] of replies.entries()) {
      expect(reply.error, `reply ${i}`).toBeUndefined();
      expect(reply.interrupted, `reply ${i}`).toBe(false);
      expect(reply.heard, `reply ${i}`).toBe(reply.generated);
      // The sounding speech, not the length: the engine says a sentence again a little differently
      // (espeak carries state from one sentence to the next: up to 50 ms in the pauses, a few ms of
      // sound), and a sentence taken up after a cut is said again. A piece heard twice or lost is
      // the cut session's first audio, ~58 ms of sound.
      const want = loudMs(await uncut(reply.generated), PER_MS * 1000);
      const got = loudMs(heard[i]!, PER_MS * 1000);
      expect(
        Math.abs(got - want),
        `reply ${i}: "${reply.generated}": ${got} ms of sound, ${want} uncut`,
      ).toBeLessThan(SOUND_SLACK_MS);
    }
  }, 90_000);
});
