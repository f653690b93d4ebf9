// A call hung up by the far end while its session is starting (a close() hang was seen once when
// a call ended ~70 ms after its session started): SIP calls in both directions, each hung up by
// the far end 0–150 ms after the answer, through the real bridge (embedded service, RTP worker).
// Every call must end and be recorded, and the bridge must then close.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { postCall } from "../../bench/lib/sip-out-load.ts";
import { placeSipCall } from "../../bench/lib/sip-uac.ts";
import { BenchUas } from "../../bench/lib/sip-uas.ts";
import { loadConfig } from "../../src/config/config.ts";
import { freeEvenRange } from "../bridges/sip/rtp/ports.ts";
import { until } from "../helpers/agents-fixture.ts";
import { silence } from "../helpers/speech.ts";
import { loopbackSipEnv } from "./bridge-env.ts";

const TOKEN = "hangup-race-token-0123456789";
const DELAYS_MS = [0, 10, 30, 50, 60, 70, 80, 90, 120, 150];

let dir: string;
let bridge: Bridge;
let uas: BenchUas;
let sipPort: number;
let closed = false;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hangup-race-"));
  uas = await BenchUas.listen(0);
  const rtp = await freeEvenRange(60);
  bridge = await startBridge(
    loadConfig({
      env: {
        ...loopbackSipEnv({ token: TOKEN, rtpPorts: `${rtp}-${rtp + 119}`, dir }),
        SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${uas.port}`,
        OUTBOUND_MAX_CONCURRENT: "100",
        OUTBOUND_CALLS_PER_SECOND: "100",
      },
    }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
  );
  sipPort = bridge.sip!.udpPort;
}, 60_000);

afterAll(async () => {
  if (!closed) await bridge?.close(0);
  await uas?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function allEnded(ids: string[]): Promise<void> {
  await until(
    () => ids.every((id) => bridge.transcripts.get(id)?.endedAt),
    `the end of ${ids.filter((id) => !bridge.transcripts.get(id)?.endedAt).join(", ")}`,
    30_000,
  );
}

describe("a call hung up as its session starts", () => {
  it("inbound: the caller's BYE 0–150 ms after the 200 ends every call", async () => {
    const calls = await Promise.all(
      DELAYS_MS.map((ms) =>
        placeSipCall({
          target: { address: "127.0.0.1", port: sipPort },
          caller: silence(1000, 8000),
          seconds: ms / 1000,
        }),
      ),
    );
    expect(calls.map((c) => c.error ?? c.byeStatus)).toEqual(DELAYS_MS.map(() => 200));
    await allEnded(calls.map((c) => c.callId));
  }, 60_000);

  it("outbound: the callee's BYE 0–150 ms after its 200 ends every call, with or without detection", async () => {
    const ids: string[] = [];
    const runs = DELAYS_MS.flatMap((ms) =>
      (["off", "hangup"] as const).map(async (amd) => {
        const callId = await postCall(bridge.url, TOKEN, "+15550100", amd);
        ids.push(callId);
        return uas.answer(callId, { caller: silence(1000, 8000), seconds: ms / 1000 });
      }),
    );
    const reports = await Promise.all(runs);
    expect(reports.map((r) => r.error ?? r.byeStatus)).toEqual(reports.map(() => 200));
    await allEnded(ids);
  }, 60_000);

  it("then the bridge closes", async () => {
    const result = await Promise.race([
      bridge.close(0).then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still closing after 20 s"), 20_000)),
    ]);
    closed = true;
    expect(result).toBe("closed");
  }, 30_000);
});
