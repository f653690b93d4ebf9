// SIP calls from a real phone (baresip) straight into the bridge and its embedded local service,
// on each codec: the greeting is heard, a spoken question is answered, keypad digits reach the
// model, a transfer goes out as REFER and is followed through, and either side can hang up.
// Words: only the agent-hangs-up case needs one to be recognized ("goodbye", biased by the
// hotwords); elsewhere the scripted agent answers whatever the recognizer (weak at 8 kHz) heard.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm, levelDbfs } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { Baresip, type BaresipCodec } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let bridge: Bridge;
/** Where transfers go: a SIPp UAS started by the transfer test. */
let deskPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-sip-"));
  deskPort = await freePort();
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      RTP_PORTS: "32000-32999",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      SVC_HOTWORDS: "goodbye,bye",
      AGENT_GREETING: "Thanks for calling. How can I help?",
      AGENT_TRANSFER_TARGET: `sip:desk@127.0.0.1:${deskPort}`,
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
  bridge.transcripts.observe((callId, event) => {
    if (event.type === "call-start") taken.push(callId);
  });
});

afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

const RATES: Record<BaresipCodec, number> = { pcmu: 8000, pcma: 8000, opus: 48000 };

/** Caller audio: silence, then each phrase followed by silence (ms). */
function callerWav(codec: BaresipCodec, parts: (number | string)[]): string {
  const rate = RATES[codec];
  const pcm = concatPcm(
    parts.map((p) => (typeof p === "number" ? new Int16Array((rate * p) / 1000) : speak(p, { rate }))),
  );
  const file = join(mkdtempSync(join(dir, "caller-")), "in.wav");
  writeFileSync(file, encodeWav(pcm, rate));
  return file;
}

/** Call ids in the order the bridge took them (seen as their call-start events are recorded). */
const taken: string[] = [];

/** The record of the one call the bridge has taken since `before`. */
function latestCall(before: Set<string>): CallRecord | undefined {
  const callId = taken.find((id) => !before.has(id));
  return callId === undefined ? undefined : bridge.transcripts.get(callId);
}

function callsTaken(): Set<string> {
  return new Set(taken);
}

const answered = (r: CallRecord | undefined) =>
  r?.turns.some((t, i) => t.role === "assistant" && i > 0 && r.turns[i - 1]?.role === "user");

describe.each(["pcmu", "pcma", "opus"] as const)("a SIP call on %s", (codec) => {
  it("is greeted, has its question answered, and ends when the caller hangs up", async () => {
    const before = callsTaken();
    const phone = await Baresip.start({
      codec,
      wav: callerWav(codec, [3500, "What are your opening hours?", 15_000]),
      wavRate: RATES[codec],
    });
    try {
      phone.dial(`sip:agent@127.0.0.1:${bridge.sip!.udpPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      const record = await until(
        () => (answered(latestCall(before)) ? latestCall(before) : undefined),
        "an answer",
      );
      expect(record.transport).toBe("sip");
      expect(record.from).toContain("caller");
      expect(record.turns[0]).toMatchObject({
        role: "assistant",
        heard: "Thanks for calling. How can I help?",
      });
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED");
      const ended = await until(() => latestCall(before)?.endReason, "the call to end");
      expect(ended).toMatch(/hung up/);
      await phone.stop();
      // What the phone heard: the agent's voice, decoded by baresip from the codec on the wire.
      const heard = parseWav(readFileSync(phone.dumps().heard!));
      expect(heard.samples.length / heard.sampleRate).toBeGreaterThan(3);
      expect(levelDbfs(heard.samples)).toBeGreaterThan(-45);
    } finally {
      await phone.stop();
    }
  });
});

describe("SIP call control through the session", () => {
  it("stops talking when the caller talks over it, and keeps only what was heard", async () => {
    const before = callsTaken();
    // The greeting starts as the call is answered; the caller talks over it after a second.
    const phone = await Baresip.start({
      codec: "pcma",
      wav: callerWav("pcma", [
        1000,
        "Sorry, I wanted to ask about an order that I placed last week.",
        12_000,
      ]),
    });
    try {
      phone.dial(`sip:agent@127.0.0.1:${bridge.sip!.udpPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      const record = await until(
        () => (answered(latestCall(before)) ? latestCall(before) : undefined),
        "an answer",
      );
      const greeting = record.turns[0];
      expect(greeting).toMatchObject({ role: "assistant", interrupted: true });
      expect(greeting?.role === "assistant" && greeting.heard.length).toBeLessThan(
        "Thanks for calling. How can I help?".length,
      );
      expect(record.events.some((e) => e.type === "barge-in" && e.outcome === "interrupted")).toBe(true);
    } finally {
      await phone.stop();
    }
  });

  it("passes keypad digits to the model, which transfers the call by REFER", async () => {
    const sipp = spawn(
      "sipp",
      ["-sn", "uas", "-i", "127.0.0.1", "-p", String(deskPort), "-nostdin", "-timeout", "60s", "-m", "1"],
      { stdio: "ignore" },
    );
    const before = callsTaken();
    const phone = await Baresip.start({ codec: "pcmu", wav: callerWav("pcmu", [20_000]) });
    try {
      phone.dial(`sip:agent@127.0.0.1:${bridge.sip!.udpPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      await until(() => latestCall(before)?.turns.length, "the greeting");
      phone.sendDigits("0#");
      const record = await until(
        () => (latestCall(before)?.endReason ? latestCall(before) : undefined),
        "the transfer to end the call",
      );
      expect(record.turns.find((t) => t.role === "user")).toMatchObject({
        source: "dtmf",
        text: "(the caller pressed on the keypad: 0 #)",
      });
      expect(record.endReason).toBe(`transferred to sip:desk@127.0.0.1:${deskPort}`);
    } finally {
      await phone.stop();
      sipp.kill();
    }
  });

  it("hangs up itself when the caller says goodbye", async () => {
    const before = callsTaken();
    const phone = await Baresip.start({ codec: "pcmu", wav: callerWav("pcmu", [3500, "Goodbye.", 20_000]) });
    try {
      phone.dial(`sip:agent@127.0.0.1:${bridge.sip!.udpPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      // The bridge's BYE ends the call at the phone, long before its audio runs out.
      await phone.waitFor("CALL_CLOSED", 30_000);
      const ended = await until(() => latestCall(before)?.endReason, "the call to end");
      expect(ended).toBe("agent: caller said goodbye");
    } finally {
      await phone.stop();
    }
  });
});
