// `npm run bench -- calls --transport sip --outbound [--calls N] [--concurrency C]`: what placing a
// call costs the bridge. The bridge (in this process, embedded local service) places N calls
// through POST /calls, C at a time, to SIPp's built-in UAS standing in for the trunk (180, then 200
// with SDP at once); each call is answered, its session starts and greets, and it is hung up by
// DELETE /calls after `--hold-s`. Figures: dial set-up (call placed → answered, from the record's
// own timestamps: INVITE built, RTP port opened, SDP offered and answered, ACK, media started),
// the HTTP answer of POST /calls, and the bridge process's CPU per call (the embedded service's
// greeting synthesis included). One JSON line.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { loadConfig } from "../../src/config.ts";
import { startBridge } from "../../src/main.ts";
import { freePort } from "../../test/bridges/sip/sipp.ts";
import { numberArg } from "./args.ts";
import { machineBusyUs } from "./calls-procs.ts";
import { percentile, round } from "./measure.ts";

const N = Math.round(numberArg("calls", 20));
const C = Math.round(numberArg("concurrency", 5));
const HOLD_S = numberArg("hold-s", 2);
const TOKEN = "outbound-bench-token-0123456789";
const dir = mkdtempSync(join(tmpdir(), "bench-outbound-"));
let sipp: ChildProcess | undefined;
try {
  const uasPort = await freePort();
  sipp = spawn(
    "sipp",
    ["-sn", "uas", "-i", "127.0.0.1", "-p", String(uasPort), "-mp", String(await freePort(true)), "-nostdin"],
    { cwd: dir, stdio: "ignore" },
  );
  await new Promise((r) => setTimeout(r, 500));
  const bridge = await startBridge(
    loadConfig({
      env: {
        HOST: "127.0.0.1",
        PORT: "0",
        BRIDGE_TOKEN: TOKEN,
        SIP_HOST: "127.0.0.1",
        SIP_PORT: "0",
        SIP_CODECS: "pcmu",
        RTP_PORTS: "38000-38399",
        SVC_LOCAL_DATA_DIR: join(dir, "data"),
        SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${uasPort}`,
        OUTBOUND_MAX_CONCURRENT: String(C),
        OUTBOUND_CALLS_PER_SECOND: "100",
        AGENT_GREETING: "Hello, this is the clinic calling about your appointment tomorrow.",
      },
    }),
    pino({ level: process.env.BENCH_LOG ?? "silent" }),
  );
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  const setupMs: number[] = [];
  const postMs: number[] = [];
  const failures: string[] = [];
  const one = async (): Promise<void> => {
    const t0 = performance.now();
    const res = await fetch(`${bridge.url}/calls`, {
      method: "POST",
      headers,
      body: JSON.stringify({ to: "+15550100", via: "sip", machineDetection: "off" }),
    });
    postMs.push(performance.now() - t0);
    const { callId } = (await res.json()) as { callId?: string };
    if (!callId) {
      failures.push(`HTTP ${res.status}`);
      return;
    }
    const deadline = Date.now() + 20_000;
    for (;;) {
      const r = bridge.transcripts.get(callId);
      if (r?.dialOutcome) {
        if (r.dialOutcome !== "human") failures.push(`${r.dialOutcome} ${r.dialReason ?? ""}`);
        else {
          const dial = r.events.find((e) => e.type === "dial")!;
          setupMs.push(Date.parse(dial.at) - Date.parse(r.startedAt));
        }
        break;
      }
      if (Date.now() > deadline) {
        failures.push("no answer within 20 s");
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await new Promise((r) => setTimeout(r, HOLD_S * 1000));
    await fetch(`${bridge.url}/calls/${callId}`, {
      method: "DELETE",
      headers: { authorization: headers.authorization },
    });
    const end = Date.now() + 10_000;
    while (!bridge.transcripts.get(callId)?.endedAt && Date.now() < end)
      await new Promise((r) => setTimeout(r, 20));
  };
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  const busy0 = machineBusyUs();
  let next = 0;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) {
        next++;
        await one();
      }
    }),
  );
  const wallUs = (performance.now() - started) * 1000;
  const cpu = process.cpuUsage(cpu0);
  const busy = machineBusyUs() - busy0;
  await bridge.close(0);
  console.log(
    JSON.stringify({
      bench: "calls",
      transport: "sip",
      outbound: true,
      path: "POST /calls -> bridge UAC -> SIPp uas (180, 200 with SDP) -> session greets -> DELETE",
      calls: N,
      concurrency: C,
      answered: setupMs.length,
      failures,
      dial_setup_ms_p50: round(percentile(setupMs, 50), 1),
      dial_setup_ms_p90: round(percentile(setupMs, 90), 1),
      post_calls_ms_p50: round(percentile(postMs, 50), 1),
      bridge_cpu_ms_per_call: round((cpu.user + cpu.system) / 1000 / N, 1),
      other_cpu_cores: round(Math.max(0, busy - cpu.user - cpu.system) / wallUs, 2),
      shared_machine: true,
    }),
  );
} finally {
  sipp?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}
