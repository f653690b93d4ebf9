// Handoff between agents (#56) on the real local service, on two transports: the Twilio simulator
// and an AudioSocket client. The scripted model calls `handoff` when the caller presses 2 (a tool
// it is offered only by the support agent); the caller hears support's words in its voice, then
// the sales agent's line in another voice, and the same call goes on with sales (pressing 2 again
// gets sales' answer, in sales' voice: it has no handoff tool). The record shows each agent's part.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { KIND_DTMF } from "../../bridges/audiosocket/framing.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { until } from "../helpers/until.ts";
import { medianF0 } from "../service/helpers/f0.ts";

const LINE = "Sales desk, how can I help?";
const HANDING = "Let me get you to sales.";
const ALREADY = "You are with sales already.";

let dir: string;
let bridge: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-handoff-e2e-"));
  mkdirSync(join(dir, "data"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "handoff test line",
      greeting: "Hello.",
      fallback: "Press 2 for sales.",
      rules: [
        {
          intent: "sales",
          when: ["keypad: 2\\b"],
          reply: HANDING,
          tool: { name: "handoff", arguments: { agent: "sales", reason: "the caller pressed 2" } },
          without_tool: ALREADY,
        },
      ],
    }),
  );
  const tree = {
    server: { host: "127.0.0.1", port: 0 },
    sip: { port: "off" },
    audiosocket: { host: "127.0.0.1", port: 0 },
    local: { dataDir: join(dir, "data"), scriptedAgent: scripted, scriptedPaceMs: 0 },
    agent: {
      greeting: "Support line.",
      voice: "en_female_aria",
      handoffs: ["sales"],
      handoffHistory: "summary",
    },
    agents: { sales: { voice: "en_male_adam", handoffLine: LINE } },
    log: { level: "silent" },
  };
  const file = join(dir, "voice-bridge.yaml");
  writeFileSync(file, stringify(tree));
  bridge = await startBridge(loadConfig({ file, env: {} }), pino({ level: process.env.E2E_LOG ?? "silent" }));
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const said = (turns: TurnView[]) =>
  turns.flatMap((t) => (t.role === "assistant" ? [{ text: t.text, agent: t.agent }] : []));

/** The record's account of the handoff, the same on every transport. */
function expectHandedOff(record: CallRecord): void {
  expect(record.agent).toBe("default");
  expect(said(record.turns)).toEqual([
    { text: "Support line.", agent: undefined },
    { text: HANDING, agent: undefined },
    { text: LINE, agent: "sales" },
    { text: ALREADY, agent: "sales" },
  ]);
  const handoff = record.events.filter((e) => e.type === "handoff");
  expect(handoff).toEqual([
    expect.objectContaining({
      from: "default",
      to: "sales",
      reason: "the caller pressed 2",
      history: "summary",
    }),
  ]);
  const tools = record.turns.flatMap((t) => (t.role === "assistant" ? t.tools : []));
  expect(tools).toEqual(["handoff"]);
}

/** The samples of `pcm` (at 8 kHz) from `fromMs` to `toMs`. */
const window = (pcm: Int16Array, fromMs: number, toMs = pcm.length / 8) => pcm.subarray(fromMs * 8, toMs * 8);

describe("handoff between agents", () => {
  it("on Twilio: the caller hears support, then sales' line in sales' voice, and sales goes on", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550100",
      // 2 and # (sent at once): to sales; later 2 again, now to sales itself.
      dtmf: [
        { digit: "2", atMs: 2500 },
        { digit: "#", atMs: 2600 },
        { digit: "2", atMs: 12_000 },
        { digit: "#", atMs: 12_100 },
      ],
      hangUpAfterMs: 4000,
      maxSeconds: 25,
    });
    const record = r.transcript as CallRecord;
    expectHandedOff(record);
    // What the caller heard: the greeting in support's (female) voice, the last answer in sales' (male).
    const support = medianF0(window(r.agentAudio, 0, 2500), 8000);
    const sales = medianF0(window(r.agentAudio, 12_000), 8000);
    expect(sales).toBeGreaterThan(60);
    expect(support).toBeGreaterThan(sales * 1.3);
  }, 60_000);

  it("on AudioSocket: the same call goes on with sales, in sales' voice", async () => {
    const uuid = "1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d";
    const client = await AsteriskClient.connect(bridge.audioSocket!.port);
    client.send(uuidFrame(uuid));
    const keys = (digits: string) => {
      for (const d of digits) client.send(frame(KIND_DTMF, new Uint8Array([d.charCodeAt(0)])));
    };
    const record = () => bridge.transcripts.get(uuid);
    const heard = (text: string) => record()?.turns.some((t) => t.role === "assistant" && t.text === text);
    // The caller's line stays open (silence) while the agents speak.
    const streaming = client.stream(new Int16Array(8 * 16_000), 8000);
    await until(() => heard("Support line."), "support's greeting");
    const supportAudio = client.audio().pcm;
    keys("2#");
    await until(() => heard(LINE), "sales' line");
    const before = client.received.length;
    keys("2#");
    await until(() => heard(ALREADY), "sales' answer");
    const salesFrames = client.received.slice(before).filter((f) => f.kind >= 0x10 && f.kind <= 0x18);
    const bytes = Buffer.concat(salesFrames.map((f) => f.payload));
    const salesAudio = Int16Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));
    const sales = medianF0(salesAudio, 8000);
    expect(sales).toBeGreaterThan(60);
    expect(medianF0(supportAudio, 8000)).toBeGreaterThan(sales * 1.3);
    client.send(frame(0x00));
    await until(() => record()?.endReason !== undefined, "the call to end");
    await streaming.catch(() => undefined);
    client.close();
    expectHandedOff(record()!);
  }, 60_000);
});
