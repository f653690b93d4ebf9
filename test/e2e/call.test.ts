// Whole calls through the real bridge and the real local service (espeak-ng TTS,
// PocketSphinx ASR, the scripted demo hotline), driven by the Twilio simulator over real
// sockets. Only Twilio itself is simulated (its REST API by a recorder).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import type { SessionServices } from "../../src/session/services.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { buildScene, speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const HOTWORDS = "open,opening,hours,where,located,address,order,status,person,goodbye,bye,thanks,that's all";

interface Harness {
  bridge: Bridge;
  dir: string;
  twiml: { callSid: string; twiml: string }[];
  faults: { asr: number; ttsOpen: number; ttsDrop: number };
}

async function startHarness(env: Record<string, string> = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), "vb-e2e-call-"));
  const twiml: Harness["twiml"] = [];
  const faults = { asr: 0, ttsOpen: 0, ttsDrop: 0 };
  const config = twilioTestConfig(dir, {
    SVC_HOTWORDS: HOTWORDS,
    AGENT_TRANSFER_TARGET: "+15550100",
    ...env,
  });
  const bridge = await startTwilioTestBridge(config, {
    callControl: {
      async updateTwiml(callSid, xml) {
        twiml.push({ callSid, twiml: xml });
      },
    },
    wrapServices: (s) => injectFaults(s, faults),
  });
  return { bridge, dir, twiml, faults };
}

/** Fails the next N uses of a service the way the network does: errors, a 503, a dropped socket. */
function injectFaults(s: SessionServices, faults: Harness["faults"]): SessionServices {
  return {
    asr: {
      recognize(pcm, rate, signal) {
        if (faults.asr > 0) {
          faults.asr -= 1;
          return Promise.reject(new Error("injected: ASR 500"));
        }
        return s.asr.recognize(pcm, rate, signal);
      },
      open(rate, signal) {
        const stream = s.asr.open(rate, signal);
        return {
          write: (pcm) => stream.write(pcm),
          abort: () => stream.abort(),
          end() {
            if (faults.asr <= 0) return stream.end();
            faults.asr -= 1;
            stream.abort();
            return Promise.reject(new Error("injected: ASR 500 at the end of an upload"));
          },
        };
      },
    },
    chat: s.chat,
    tts: {
      async open(rate) {
        if (faults.ttsOpen > 0) {
          faults.ttsOpen -= 1;
          throw new Error("injected: tts.response.error 503 overloaded");
        }
        const stream = await s.tts.open(rate);
        if (faults.ttsDrop <= 0) return stream;
        faults.ttsDrop -= 1;
        // The socket drops after the first audio chunk of the turn.
        return {
          get closed() {
            return stream.closed;
          },
          sendText: (t) => stream.sendText(t),
          flush: () => stream.flush(),
          close: () => stream.close(),
          events: {
            async *[Symbol.asyncIterator]() {
              for await (const ev of stream.events) {
                yield ev;
                if (ev.type === "audio") {
                  stream.close();
                  throw new Error("injected: TTS socket closed (1006)");
                }
              }
            },
          },
        };
      },
    },
  };
}

const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });

function turns(result: { transcript?: unknown }): TurnView[] {
  return ((result.transcript as CallRecord | undefined)?.turns ?? []) as TurnView[];
}
const userTexts = (t: TurnView[]) => t.filter((x) => x.role === "user").map((x) => x.text);
const agentTurns = (t: TurnView[]) =>
  t.filter((x): x is Extract<TurnView, { role: "assistant" }> => x.role === "assistant");

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
}, 60_000);
afterAll(async () => {
  await h.bridge.close(0);
  rmSync(h.dir, { recursive: true, force: true });
});

describe("a call through the bridge", () => {
  it("greets, answers several turns, and hangs up when the caller says goodbye", async () => {
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      says: [say("Where are you located?"), say("That's all, goodbye.")],
      maxSeconds: 40,
    });
    const t = turns(r);
    const agent = agentTurns(t);
    expect(agent[0]?.text).toBe("Thanks for calling Acme Bikes. How can I help you?");
    expect(userTexts(t)).toHaveLength(2);
    expect(agent.some((a) => a.text.includes("Harbour Street"))).toBe(true);
    expect(agent.at(-1)?.tools).toContain("end_call");
    // Hung up through Twilio's REST API (recorded here; real Twilio then ends the stream).
    expect(h.twiml.some((x) => x.callSid === r.callSid && x.twiml.includes("<Hangup"))).toBe(true);
    expect((r.transcript as CallRecord).endReason).toBe("agent: caller said goodbye");
    // Every answer was measured, and the caller heard audio for each turn.
    for (const a of agent.slice(1)) expect(a.metrics.voiceToVoiceMs).toBeGreaterThan(0);
    expect(r.turns.every((turn) => turn.responseMs !== null)).toBe(true);
    const metrics = await (await fetch(`${h.bridge.url}/metrics`)).text();
    expect(metrics).toMatch(/voice_bridge_turn_voice_to_voice_ms_count [1-9]/);
  }, 60_000);

  it("stops talking when interrupted and keeps only what the caller heard", async () => {
    // The caller talks over the greeting, 1.2 s into it, for about two seconds.
    const scene = buildScene(
      [
        { silenceMs: 1700 },
        { say: "Wait, wait, I need to change the address on my order please." },
        { silenceMs: 6000 },
      ],
      { rate: 8000 },
    );
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      caller: { samples: scene.pcm, rate: 8000 },
      maxSeconds: 20,
    });
    const agent = agentTurns(turns(r));
    const greeting = agent[0]!;
    expect(greeting.interrupted).toBe(true);
    expect(greeting.generated).toBe("Thanks for calling Acme Bikes. How can I help you?");
    expect(greeting.heard.length).toBeLessThan(greeting.generated.length);
    expect(r.clears.length).toBeGreaterThanOrEqual(1);
    // The interruption became the caller's next turn, and the agent answered it.
    expect(userTexts(turns(r)).length).toBeGreaterThanOrEqual(1);
    expect(agent.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("does not cut the caller off at a pause in the middle of a sentence", async () => {
    const scene = buildScene(
      [
        { silenceMs: 4500 },
        // The recognizer hears the first half as "where are the": unfinished, so the agent waits.
        { say: "Where is your" },
        { silenceMs: 600 },
        { say: "address, please?" },
        { silenceMs: 5000 },
      ],
      { rate: 8000 },
    );
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      caller: { samples: scene.pcm, rate: 8000 },
      maxSeconds: 20,
    });
    const t = turns(r);
    // The two halves became one turn, answered once.
    expect(userTexts(t)).toHaveLength(1);
    expect(agentTurns(t)).toHaveLength(2);
    // If the agent began answering in the pause (the recognizer can hear the first half as a
    // finished sentence), it yielded as soon as the caller went on.
    const resumedAt = scene.speech[1]!.startMs;
    const early = r.turns.find(
      (turn) => turn.endMs <= scene.speech[0]!.endMs + 100 && turn.responseMs !== null,
    );
    if (early && early.endMs + early.responseMs! < resumedAt) {
      expect(r.clears.some((c) => c >= resumedAt && c - resumedAt <= 300)).toBe(true);
    }
  }, 60_000);

  it("transfers the call when the caller presses 0 for an operator", async () => {
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      dtmf: [{ digit: "0", atMs: 4000 }],
      maxSeconds: 15,
    });
    const agent = agentTurns(turns(r));
    expect(agent.at(-1)?.tools).toContain("transfer_call");
    const dial = h.twiml.find((x) => x.callSid === r.callSid);
    expect(dial?.twiml).toContain("<Dial>+15550100</Dial>");
    expect((r.transcript as CallRecord).endReason).toBe("transferred to +15550100");
  }, 60_000);

  it("passes keypad digits to the agent", async () => {
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      dtmf: [
        { digit: "4", atMs: 4000 },
        { digit: "2", atMs: 4200 },
        { digit: "#", atMs: 4400 },
      ],
      maxSeconds: 12,
    });
    const user = turns(r).filter((x) => x.role === "user");
    expect(user).toEqual([
      expect.objectContaining({ source: "dtmf", text: expect.stringContaining("4 2 #") }),
    ]);
    expect(agentTurns(turns(r)).length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("refuses a forged signature on the webhook", async () => {
    await expect(
      simulateCall({
        url: h.bridge.url,
        bridgeToken: h.bridge.token,
        authToken: "forged-token",
        says: [say("Hello")],
        maxSeconds: 5,
      }),
    ).rejects.toThrow(/403/);
  }, 30_000);

  it("survives an ASR error, a TTS 503 and a dropped TTS socket", async () => {
    h.faults.asr = 1; // the first upload fails, the retry (one request) succeeds
    h.faults.ttsOpen = 2; // the spare and its replacement fail: a turn's first open retries
    h.faults.ttsDrop = 1; // and one session drops mid-turn
    const r = await simulateCall({
      url: h.bridge.url,
      bridgeToken: h.bridge.token,
      authToken: AUTH_TOKEN,
      says: [say("Where are you located?"), say("Where are you located?"), say("That's all, goodbye.")],
      maxSeconds: 50,
    });
    const t = turns(r);
    expect(h.faults).toEqual({ asr: 0, ttsOpen: 0, ttsDrop: 0 });
    // The call went on to the end: every caller turn got an answer, and goodbye still hung up.
    expect(userTexts(t).length).toBe(3);
    expect(agentTurns(t).at(-1)?.tools).toContain("end_call");
    expect((r.transcript as CallRecord).endReason).toBe("agent: caller said goodbye");
  }, 90_000);
});
