// An AudioSocket call with a real CallSession on the local service (espeak-ng TTS, PocketSphinx ASR,
// the scripted agent), over real TCP: the session starts at the rate of the first audio frame,
// greets, hears the caller, answers in the same format, and ends on Asterisk's hang-up.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svcServices } from "../../../app/bridge/svc-adapters.ts";
import { type AudioSocketServer, startAudioSocketServer } from "../../../bridges/audiosocket/server.ts";
import { sessionConfigOf } from "../../../src/agents/call-agent.ts";
import { SvcClient } from "../../../src/api/client.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { systemClock } from "../../../src/core/clock.ts";
import { TranscriptStore } from "../../../src/records/call-record.ts";
import {
  type LocalService,
  serviceOptionsFromConfig,
  startLocalService,
} from "../../../src/service/index.ts";
import { warmSpeechEngines } from "../../../src/service/speech/engines.ts";
import { CallSession } from "../../../src/session/call-session.ts";
import { sileroDetectorFactory } from "../../../src/session/vad-detector.ts";
import { speak } from "../../helpers/speech.ts";
import { until } from "../../helpers/until.ts";
import { AsteriskClient, uuidFrame } from "./client.ts";

const UUID = "6f1c1a52-9b0e-4c53-8a57-2d3f4e5a6b7c";
const log = pino({ level: process.env.E2E_LOG ?? "silent" });
let dir: string;
let service: LocalService;
let server: AudioSocketServer;
const transcripts = new TranscriptStore(undefined);
const ended: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-audiosocket-"));
  const config = loadConfig({
    env: { SVC_LOCAL_DATA_DIR: dir, SVC_HOTWORDS: "open,opening,hours,where,located,goodbye" },
  });
  service = await startLocalService({ ...serviceOptionsFromConfig(config.local), logger: log });
  await warmSpeechEngines(service.ctx);
  const client = new SvcClient({ baseURL: service.url, apiKey: service.apiKeys[0]!, logger: log });
  const services = svcServices(client, config.service);
  const createSpeechDetector = await sileroDetectorFactory();
  server = await startAudioSocketServer({
    host: "127.0.0.1",
    port: 0,
    log,
    clock: systemClock,
    onCall(transport) {
      const session = new CallSession({
        transport,
        services,
        createSpeechDetector,
        clock: systemClock,
        config: sessionConfigOf(config.agent),
        log,
        transcripts,
        onEnd: (end) => ended.push(end.reason),
      });
      session.start();
    },
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an AudioSocket call through a CallSession", () => {
  it("greets, hears the caller, answers in the connection's format, and ends on Asterisk's hang-up", async () => {
    const c = await AsteriskClient.connect(server.port);
    c.send(uuidFrame(UUID));
    // Asterisk sends audio all along: silence while the agent greets, then the caller, then silence.
    await c.stream(new Int16Array(8000 * 4), 8000);
    const greetingSamples = c.audio().pcm.length;
    expect(greetingSamples).toBeGreaterThan(8000 * 0.5);
    await c.stream(speak("What are your opening hours?", { rate: 8000 }), 8000);
    const turnsOf = () => transcripts.get(UUID)?.turns ?? [];
    const silence = new Int16Array(160 * 25);
    for (let i = 0; i < 20 && turnsOf().filter((t) => t.role === "assistant").length < 2; i++)
      await c.stream(silence, 8000);
    c.send(Buffer.from([0x00, 0x00, 0x00]));
    await until(() => ended.length === 1, "the session to end", 20_000);

    const record = transcripts.get(UUID)!;
    expect(record).toMatchObject({ callId: UUID, transport: "audiosocket" });
    expect(record.turns.filter((t) => t.role === "user").length).toBeGreaterThanOrEqual(1);
    expect(record.turns.filter((t) => t.role === "assistant").length).toBeGreaterThanOrEqual(2);
    expect(ended[0]).toMatch(/hang-up from Asterisk/);
    const back = c.audio();
    expect(back.kinds).toEqual(new Set([0x10]));
    expect(back.frameBytes).toEqual(new Set([320]));
    expect(back.pcm.length).toBeGreaterThan(greetingSamples);
    expect(server.stats).toMatchObject({ calls: 1, badFrames: 0 });
  }, 90_000);
});
