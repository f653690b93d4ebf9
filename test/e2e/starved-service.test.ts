// A starved service, for real: the bridge talks to `voice-bridge service` in its own process,
// and that process is stopped (SIGSTOP) for 8 s in the middle of a Twilio call while the caller
// keeps talking. What the bridge keeps toward it must stay bounded (connections and unsent
// bytes: one live utterance and one recognition, not one per utterance of the stall), and once
// the service runs again (SIGCONT) the same call is answered again.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { startServiceProcess } from "../helpers/service-process.ts";
import { buildScene } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const HOTWORDS = "open,opening,hours,where,located,address,order,status,person,goodbye,bye,thanks";
const dir = mkdtempSync(join(tmpdir(), "vb-starved-"));
let service: ChildProcess | undefined;
let bridge: Bridge | undefined;

afterAll(async () => {
  service?.kill("SIGCONT");
  await bridge?.close(0);
  service?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function startService(): Promise<{ url: string; key: string; port: number }> {
  const started = await startServiceProcess(join(dir, "svc"));
  service = started.proc;
  return { ...started, port: Number(new URL(started.url).port) };
}

/** Established TCP connections toward `port` (the bridge is the service's only client here). */
function connectionsTo(port: number): number {
  let n = 0;
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 4) continue;
      const remotePort = Number.parseInt(f[2]!.split(":")[1]!, 16);
      if (remotePort === port && f[3] === "01") n++;
    }
  }
  return n;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a call while the service is stopped", () => {
  it("keeps the bridge's backlog toward it bounded, and is answered again once it runs", async () => {
    const svc = await startService();
    const config = twilioTestConfig(join(dir, "bridge"), {
      SVC_BASE_URL: svc.url,
      SVC_API_KEY: svc.key,
      SVC_HOTWORDS: HOTWORDS,
    });
    bridge = await startTwilioTestBridge(config);
    const b = bridge;
    // Greeting; a question answered normally; from 12 s the service is stopped for 8 s while the
    // caller says six more things; at 24 s, with the service back, one more question.
    const stall = { from: 12_000, ms: 8_000 };
    const parts: Parameters<typeof buildScene>[0] = [{ silenceMs: 5_000 }, { say: "Where are you located?" }];
    parts.push({ silenceMs: 5_000 });
    for (let i = 0; i < 6; i++) parts.push({ say: "Hello, are you there?" }, { silenceMs: 1_000 });
    parts.push({ silenceMs: 3_000 }, { say: "What are your opening hours?" }, { silenceMs: 9_000 });
    const scene = buildScene(parts, { rate: 8000 });

    const t0 = Date.now();
    const call = simulateCall({
      url: b.url,
      bridgeToken: b.token,
      authToken: AUTH_TOKEN,
      caller: { samples: scene.pcm, rate: 8000 },
      maxSeconds: 45,
    });
    await sleep(stall.from - (Date.now() - t0));
    const before = connectionsTo(svc.port);
    const arrayBuffersBefore = process.memoryUsage().arrayBuffers;
    service!.kill("SIGSTOP");
    let most = 0;
    let arrayBuffersMost = 0;
    for (let t = 0; t < stall.ms; t += 200) {
      await sleep(200);
      most = Math.max(most, connectionsTo(svc.port));
      arrayBuffersMost = Math.max(arrayBuffersMost, process.memoryUsage().arrayBuffers);
    }
    service!.kill("SIGCONT");
    const stalledAt = t0 + stall.from + stall.ms;
    const r = await call;

    // Six utterances during the stall, yet the bridge held at most its live utterance, one
    // recognition, a TTS session and its spare, and a chat request toward the stopped service.
    // (Measured: 2 connections before and at most during the stall; 8 when each utterance's
    // recognition was left waiting.)
    expect(most).toBeLessThanOrEqual(before + 3);
    expect(most).toBeLessThanOrEqual(6);
    // (This test process holds the simulated caller too; the growth allowed is a few frames' worth.)
    expect(arrayBuffersMost - arrayBuffersBefore).toBeLessThan(32 * 2 ** 20);

    const record = r.transcript as CallRecord;
    const turns = (record?.turns ?? []) as TurnView[];
    const agent = turns.filter((t): t is Extract<TurnView, { role: "assistant" }> => t.role === "assistant");
    // The call lived through it, and the agent spoke again after the service came back.
    expect(agent.length).toBeGreaterThanOrEqual(3);
    const late = agent.filter((a) => Date.parse(a.at) > stalledAt);
    expect(late.length).toBeGreaterThanOrEqual(1);
    expect(late.some((a) => a.text.length > 0)).toBe(true);
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    expect(metrics).toMatch(/voice_bridge_backlog_drops_total/);
  }, 120_000);
});
