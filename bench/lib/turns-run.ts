// Runs the labelled calls through a real bridge: startBridge with the embedded local service
// (scripted agent, espeak-ng TTS, PocketSphinx ASR) in this process, each case placed as a
// Twilio call by the simulator, a few at a time so the set takes a couple of minutes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Bridge, type BridgeOverrides, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import { type Logger, silentLogger } from "../../src/core/log.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { onStreamCase } from "./turns-allowance.ts";
import { CALL_RATE, type TurnCase } from "./turns-cases.ts";
import { judge, type Outcome } from "./turns-judge.ts";
import type { SpokenSentence } from "./turns-tts-tap.ts";

export interface BenchBridge {
  bridge: Bridge;
  close(): Promise<void>;
}

/** Words of the demo hotline's rules (its menu), for the --hotwords runs: what a deployer would list. */
export const HOTLINE_HOTWORDS = [
  "Acme Bikes",
  "bike",
  "opening hours",
  "open",
  "close",
  "where are you",
  "address",
  "order",
  "order number",
  "order status",
  "delivery",
  "person",
  "thank you",
  "hello",
  "goodbye",
  "one two three four five six seven eight nine zero",
];

/**
 * A bridge on a loopback port with its own temporary data directory (removed on close).
 * `overrides` are config keys as on the command line (e.g. { agent: { bargeInConfirmMs: 800 } }).
 */
export async function startBenchBridge(
  env: Record<string, string> = {},
  overrides: Record<string, unknown> = {},
  log: Logger = silentLogger,
  bridgeOverrides: BridgeOverrides = {},
): Promise<BenchBridge> {
  const dir = mkdtempSync(join(tmpdir(), "bench-turns-"));
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: dir,
      LOG_LEVEL: "silent",
      ...env,
    },
    overrides,
  });
  const bridge = await startBridge(config, log, bridgeOverrides);
  return {
    bridge,
    async close() {
      await bridge.close(2000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** GET /calls/:id once the call has been filed (its call-end event), plus a moment for the last reply. */
async function fetchRecord(target: BridgeTarget, callSid: string): Promise<unknown> {
  const url = target.url;
  const headers: Record<string, string> = target.token ? { authorization: `Bearer ${target.token}` } : {};
  for (let attempt = 0; attempt < 20; attempt++) {
    await new Promise((r) => setTimeout(r, 150));
    const res = await fetch(`${url}/calls/${encodeURIComponent(callSid)}`, { headers });
    if (!res.ok) continue;
    const record = (await res.json()) as { events?: Array<{ type: string }> };
    if (!record.events?.some((e) => e.type === "call-end")) continue;
    await new Promise((r) => setTimeout(r, 250));
    return (await fetch(`${url}/calls/${encodeURIComponent(callSid)}`, { headers })).json();
  }
  throw new Error(`GET /calls/${callSid}: no finished record`);
}

/** Where the cases' calls go: the bridge's URL and its token (for GET /calls/:id). */
export type BridgeTarget = Pick<Bridge, "url" | "token">;

/** `spoken`: what the bridge's speech sessions delivered so far (turns-tts-tap.ts), for repeats. */
export async function runCase(
  target: BridgeTarget,
  c: TurnCase,
  spoken?: () => readonly SpokenSentence[],
): Promise<Outcome> {
  try {
    const sim = await simulateCall({
      url: target.url,
      caller: { samples: c.caller, rate: CALL_RATE, label: c.id, ...(c.cues ? { cues: c.cues } : {}) },
      maxSeconds: c.maxSeconds,
      // Hang up as soon as the agent has finished: a reply cut short by the hang-up is not filed
      // in the call record (CallSession.end cancels the playing reply; see the bench report).
      hangUpAfterMs: 300,
      // Fetched below, once the bridge has filed the call.
      fetchTranscript: false,
      // The simulator's own speech yardstick must sit above the noise bed.
      ...(c.noiseDbfs !== undefined ? { speechThresholdDbfs: Math.max(-45, c.noiseDbfs + 10) } : {}),
    });
    sim.transcript = await fetchRecord(target, sim.callSid);
    // Where the timeline waited for the agent, its labels move onto the stream.
    return { ...judge(onStreamCase(c, sim.holds), sim, spoken?.()), callSid: sim.callSid };
  } catch (err) {
    return {
      id: c.id,
      category: c.category,
      over: c.over,
      text: c.text,
      soundMs: Math.round(c.endMs - c.startMs),
      valid: false,
      invalidWhy: "call failed",
      error: (err as Error).message,
      userTexts: [],
      bargeIns: { interrupted: 0, resumed: 0 },
      roomPauses: [],
    };
  }
}

/** Runs the cases `concurrency` at a time (starts staggered so speech ends do not line up). */
export async function runCases(
  target: BridgeTarget,
  cases: readonly TurnCase[],
  concurrency: number,
  onDone?: (o: Outcome) => void,
  spoken?: () => readonly SpokenSentence[],
): Promise<Outcome[]> {
  const results = new Array<Outcome>(cases.length);
  let next = 0;
  const worker = async (w: number) => {
    await new Promise((r) => setTimeout(r, w * 900));
    while (next < cases.length) {
      const i = next++;
      results[i] = await runCase(target, cases[i]!, spoken);
      onDone?.(results[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, (_, w) => worker(w)));
  return results;
}
