// An Asterisk AudioSocket call through the real bridge and the embedded local service: a
// client written to the published framing connects, sends its UUID and real speech (espeak-ng,
// 8 kHz slin) in real time, hears the greeting and an answer in the same format, and hangs up.
// The words are not checked: the embedded recognizer gets most of them wrong (docs/local-service.md), and the
// scripted agent answers whatever it hears; what matters is that a turn went round.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let bridge: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-as-"));
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      AUDIOSOCKET_HOST: "127.0.0.1",
      AUDIOSOCKET_PORT: "0",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      AGENT_GREETING: "Hello, thanks for calling.",
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
});

afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("an AudioSocket call through the bridge", () => {
  it("greets, answers a spoken question in the caller's own format, and ends on the hang-up frame", async () => {
    const port = bridge.audioSocket!.port;
    const uuid = "4f1c2a3b-5d6e-4f70-8a9b-0c1d2e3f4a5b";
    const client = await AsteriskClient.connect(port);
    client.send(uuidFrame(uuid));
    const silence = (ms: number) => new Int16Array(8 * ms);
    await client.stream(silence(2500), 8000); // the greeting plays meanwhile
    await client.stream(speak("What are your opening hours?", { rate: 8000 }), 8000);
    const turns = () => bridge.transcripts.get(uuid)?.turns ?? [];
    // Silence while the bridge answers, as Asterisk keeps sending.
    const streaming = client.stream(silence(6000), 8000);
    await until(
      () => turns().some((t, i) => t.role === "assistant" && turns()[i - 1]?.role === "user"),
      "an answer to the caller's turn",
      20_000,
    );
    await streaming;
    const record = bridge.transcripts.get(uuid)!;
    expect(record.transport).toBe("audiosocket");
    expect(record.turns[0]).toMatchObject({ role: "assistant", heard: "Hello, thanks for calling." });
    const answer = record.turns.find((t, i) => i > 0 && t.role === "assistant");
    expect(answer?.role === "assistant" && answer.metrics.voiceToVoiceMs).toBeGreaterThan(0);
    // Agent audio came back as 8 kHz slin in 20 ms frames, and it is not silence.
    const { pcm, kinds, frameBytes } = client.audio();
    expect([...kinds]).toEqual([0x10]);
    expect([...frameBytes]).toEqual([320]);
    expect(pcm.some((s) => Math.abs(s) > 1000)).toBe(true);
    client.send(frame(0x00));
    await until(() => bridge.transcripts.get(uuid)?.endReason !== undefined, "the call to end");
    expect(bridge.activeCalls).toBe(0);
    client.close();
  });
});
