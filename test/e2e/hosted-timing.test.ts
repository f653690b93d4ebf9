// Calls through the real bridge and its embedded local service playing a hosted service's timing
// (SVC_LOCAL_LATENCY=hosted: the transcript 400 ms after the upload, the first chat chunk 550 ms
// after the request, every TTS message 250 ms late), driven by the Twilio simulator over real
// sockets. What the caller must get there as here: every question answered, with words, after
// one chat request; and a caller who goes on after a pause gets one answer to all their words.
// Timings belong to `npm run bench -- turns --latency hosted`; this checks counts and order.
// The words are espeak-ng's, recognized by PocketSphinx: nothing here depends on which words it
// hears, only on there being a turn.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { runCallCommand } from "../../tools/twilio-sim/command.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { buildScene, speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const CHAT = "POST /v1/chat/completions";

let bridge: Bridge;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-hosted-"));
  const config = twilioTestConfig(dir, { SVC_LOCAL_LATENCY: "hosted" });
  bridge = await startTwilioTestBridge(config);
}, 60_000);
afterAll(async () => {
  await bridge.close(0);
  rmSync(dir, { recursive: true, force: true });
});

const chatRequests = () => bridge.localService?.requests()[CHAT]?.requests ?? 0;
const turnsOf = (r: { transcript?: unknown }) =>
  ((r.transcript as CallRecord | undefined)?.turns ?? []) as TurnView[];
const agentTurns = (t: TurnView[]) =>
  t.filter((x): x is Extract<TurnView, { role: "assistant" }> => x.role === "assistant");

describe("a call on a service with hosted timing", () => {
  it("answers every question with words, after one chat request each", async () => {
    const before = chatRequests();
    const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      says: [
        say("What are your opening hours?"),
        say("Where are you located?"),
        say("Can I talk to a person?"),
      ],
      maxSeconds: 60,
    });
    const t = turnsOf(r);
    const users = t.filter((x) => x.role === "user");
    const replies = agentTurns(t); // the greeting too: the demo agent's model greets
    expect(users.length).toBeGreaterThanOrEqual(3);
    // Each caller turn was followed by an answer the caller heard, with words in it.
    for (let i = 0; i < t.length; i++) {
      if (t[i]!.role !== "user") continue;
      const next = t[i + 1];
      expect(next?.role, `the turn after caller turn ${i}`).toBe("assistant");
      if (next?.role === "assistant")
        expect(next.heard.trim(), `the answer to caller turn ${i}`).not.toBe("");
    }
    for (const a of replies) expect(a.metrics.chatRequests).toBe(1);
    // At the service: one chat request per agent turn, none sent twice.
    expect(chatRequests() - before).toBe(replies.length);
    // The caller heard each answer (the simulator measured a response to every line it said).
    expect(r.turns.every((turn) => turn.responseMs !== null)).toBe(true);
  }, 90_000);

  it("joins words said after a pause to the turn and answers once, the stale request dropped", async () => {
    // A 900 ms pause: long enough that the bridge prepares (and may confirm) an answer to the
    // first words, too short for that answer to be heard at hosted timing before the caller goes on.
    // The caller waits for the greeting to end, however long a loaded machine takes to play it.
    const scene = buildScene(
      [{ say: "I would like to know" }, { silenceMs: 900 }, { say: "where your shop is, please." }],
      { rate: 8000 },
    );
    const droppedBefore = await speculativeDropped();
    const before = chatRequests();
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      says: [{ samples: scene.pcm, rate: 8000 }],
      maxSeconds: 30,
    });
    expect(r.transcriptError).toBeUndefined();
    const t = turnsOf(r);
    // What the call was, should its turns not be the expected ones.
    const seen = JSON.stringify(t.map((x) => [x.role, x.role === "user" ? x.text : x.heard]));
    expect(
      t.filter((x) => x.role === "user"),
      seen,
    ).toHaveLength(1);
    const replies = agentTurns(t); // the greeting, then the answer
    expect(replies).toHaveLength(2);
    expect(replies[1]!.heard.trim()).not.toBe("");
    // Every chat request beyond the two turns' own was a speculative one, dropped and counted.
    const extra = chatRequests() - before - 2;
    expect(extra).toBe((await speculativeDropped()) - droppedBefore);
  }, 60_000);
});

describe("what a simulated call says it ran under", () => {
  it("names the embedded service's timing, from the bridge's /readyz", async () => {
    const ready = (await (await fetch(`${bridge.url}/readyz`)).json()) as {
      localService?: { timing?: string };
    };
    expect(ready.localService?.timing).toBe("hosted: asr=400,chat=550,tts=250 ms");
    let report = "";
    await runCallCommand({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      maxSeconds: 3,
      print: (text) => {
        report += text;
      },
    });
    expect(report).toContain("ran at hosted: asr=400,chat=550,tts=250 ms (SVC_LOCAL_LATENCY)");
  }, 30_000);
});

async function speculativeDropped(): Promise<number> {
  const { values } = await bridge.metrics.speculativeChatsDropped.get();
  return values.reduce((n, v) => n + v.value, 0);
}
