// `npm run bench -- calls [--transport twilio|sip] [--calls N] [--seconds S] [--lg-procs K] [--pick-calls M]
//   [--ramp-s R] [--rtp-ports LOW-HIGH] [--srtp] [--tls] [--cpu-prof DIR] [--lg-cpu-prof DIR] [--renice] [--keep] [--api]
//   [--latency PROFILE] [--faults SPEC] [--outbound [--setup-calls M]]`
//   (--srtp, with --transport sip: a plain run, then the same calls with SDES-SRTP (AES_CM_128_
//   HMAC_SHA1_80, libsrtp2 on both ends); one JSON line of the SRTP run's figures with
//   plain_bridge_cpu_us_per_call_s and srtp_cpu_overhead_pct, the CPU SRTP adds per call-second;
//   --api: the bridge is built with the TypeScript API, createBridge and a code-defined agent,
//   bench/lib/api-bridge.ts, instead of `voice-bridge start`; the agents phase needs a config file
//   to reload, so it is skipped;
//   --tls: the calls' SIP over TLS, in both runs, so the overhead stays SRTP's own;
//   --outbound (with --transport sip): the bridge places every call, then the set-up cost of
//   --setup-calls M (default 10) placed calls one after another (see OUTBOUND below);
//   --latency: the timing of a hosted service the local service plays (local.latency, e.g. hosted:
//   asr 400, chat 550, tts 250 ms; default none), said in the line as `latency`;
//   --faults: the failures of a hosted service it plays (local.faults, e.g.
//   chat503=0.3,asr503=0.2,ttsCut=0.2,chatStall=0.1; default none), said as `faults`, with the
//   faults it played over the load window as `faults_injected` (counted in its log);
//   (--cpu-prof: V8 CPU profile of the bridge; --keep: keep the logs; --renice: see NICE;
//   --rtp-ports: the bridge's RTP range with --transport sip, default 20000-20999;
//   env BENCH_CALLS_BRIDGE_FLAGS: extra Node flags for the bridge, e.g. --trace-gc)
//
// N simulated calls of S seconds against a separate bridge process, all on 127.0.0.1 (the
// processes are started by bench/lib/calls-setup.ts, as for `bench soak`):
//   local service (`voice-bridge service --engines synthetic`, benchmark-only engines)
//     ← bridge (`voice-bridge start`, SVC_BASE_URL/SVC_API_KEY pointing at it)
//       ← K load-generator processes, each running its share of the calls:
//         twilio (default): bench/lib/calls-load.ts, simulateCall against signed Twilio
//           endpoints: real-time 20 ms µ-law media, marks echoed, clear honoured; the agent's
//           WebSocket frames timed by their kernel receive stamps (bench/lib/ws-stamps.ts);
//         sip: bench/lib/calls-load-sip.ts, a minimal SIP UAC per call (INVITE/ACK/BYE over
//           UDP) sending 20 ms PCMU RTP and timing the agent's RTP against its timestamps
//           (each packet by its kernel receive stamp).
// Every caller says "What are your opening hours?" (espeak-ng) at 5 s and every 8 s after, so
// the bridge runs full turns: VAD, end of turn, ASR request, chat stream, TTS session, paced
// playout of a ~4 s reply. Calls start evenly over R seconds (default min(5, S/4)); the
// steady-state window runs from R + 1 s after the first start until 0.5 s before the first end.
// Then (Twilio) the agents phase, bench/lib/calls-agents.ts: M calls without and M with a
// call-start webhook, for the agent choice and greeting timings.
// Prints one JSON line; the figures are defined in bench/lib/calls-summary.ts and calls-agents.ts. Everything is
// bounded in time and every process this starts is stopped before it exits.

import { type ChildProcess, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rtpSender } from "../bridges/sip/rtp/native-sender.ts";
import { freePort } from "../test/helpers/free-port.ts";
import { numberArg, stringArg } from "./lib/args.ts";
import { agentsPhase } from "./lib/calls-agents.ts";
import { type BenchTransport, bridgeCallEnds } from "./lib/calls-bridge-ends.ts";
import type { LoadReport } from "./lib/calls-load.ts";
import { outboundSetupCost } from "./lib/calls-outbound.ts";
import {
  bridgeLoopLagMs,
  bridgeRtpSendLateMs,
  exited,
  machineBusyUs,
  mainThreadCpuUs,
  processCpuUs,
  processRssMb,
  spawnNode,
  stopProcess,
  waitForLine,
} from "./lib/calls-procs.ts";
import { quietLine, readyCalls, startBenchProcesses, writeTimeline } from "./lib/calls-setup.ts";
import { summarize } from "./lib/calls-summary.ts";
import { TWILIO_TOKEN } from "./lib/calls-transports.ts";
import { faultsArg, faultsInLog } from "./lib/faults-arg.ts";
import { latencyArg } from "./lib/latency-arg.ts";
import { espeakSpeech } from "./lib/measure.ts";
import { chatRequestsInLog } from "./lib/service-time.ts";

/**
 * --outbound (with --transport sip): the bridge places every call (POST /calls, machine detection
 * off) to the load generator, which answers and runs it as the inbound run's caller does; the
 * figures are the inbound run's, then the set-up cost on its own (bench/lib/calls-outbound.ts).
 */
const OUTBOUND = process.argv.includes("--outbound");

const arg = numberArg;
const strArg = stringArg;

const TRANSPORT: BenchTransport = (() => {
  const t = strArg("transport") ?? "twilio";
  if (t !== "twilio" && t !== "sip")
    throw new Error(`--transport: expected twilio or sip, got ${JSON.stringify(t)}`);
  return t;
})();
const RTP_PORTS = strArg("rtp-ports") ?? "20000-20999";
const N = Math.round(arg("calls", 50));
const S = arg("seconds", 30);
const K = process.argv.includes("--outbound") ? 1 : Math.round(arg("lg-procs", N > 100 ? 2 : 1));
const RAMP_S = arg("ramp-s", Math.min(5, S / 4));
const CPU_PROF = strArg("cpu-prof");
const LG_CPU_PROF = strArg("lg-cpu-prof");
const SRTP = process.argv.includes("--srtp");
if (SRTP && TRANSPORT !== "sip") throw new Error("--srtp: only with --transport sip");
/** --tls: SIP over TLS (a certificate made for the run), in both runs of --srtp. */
const TLS = process.argv.includes("--tls");
if (TLS && TRANSPORT !== "sip") throw new Error("--tls: only with --transport sip");
const API = process.argv.includes("--api");
const LATENCY = latencyArg();
/**
 * The local service plays --latency and --faults and logs each request it handles and each fault
 * it plays: chat requests and faults are counted there.
 */
const FAULTS = faultsArg();
const SERVICE = { serviceEnv: { ...LATENCY.env, ...FAULTS.env }, serviceLogLevel: "debug" };
if (OUTBOUND && (TRANSPORT !== "sip" || SRTP || TLS || API))
  throw new Error("--outbound: with --transport sip only (not --srtp, --tls or --api)");
/** --setup-calls M (with --outbound): calls of the set-up cost phase, one after another. */
const SETUP_CALLS = Math.round(arg("setup-calls", 10));
/** Calls of the agents phase, each way (without and with a call-start webhook); 0 skips it. */
const PICK_CALLS = API ? 0 : Math.round(arg("pick-calls", 20, { zero: true }));
/** Longer than the default 250 ms so the engine chain always finishes inside it (calls-summary.ts). */
const MIN_EOU_MS = 600;
const PHRASE_AT_S = 5;
const PHRASE_EVERY_S = 8;
if (S < 12) throw new Error("--seconds: at least 12 (a caller turn at 5 s and the reply)");

/**
 * --renice: the benchmark's processes (service, bridge, load generators) run at nice -10, so work of
 * others on a shared machine does not decide the figures (other_cpu_cores says how much there was).
 */
const NICE = process.argv.includes("--renice") ? -10 : undefined;

const dir = mkdtempSync(join(tmpdir(), "bench-calls-"));
const children: ChildProcess[] = [];
const deadline = setTimeout(
  () => {
    process.stderr.write("bench calls: overall time limit reached, stopping\n");
    for (const c of children) c.kill("SIGKILL");
    process.exit(3);
  },
  (S + RAMP_S + 180) * 1000 * (SRTP ? 2 : 1),
);
deadline.unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    for (const c of children) c.kill("SIGKILL");
    process.exit(130);
  });
}

/** The caller's side of every call: quiet line noise and the phrase at 5 s, 13 s, 21 s, … */
function callerTimeline(): Int16Array {
  const phrase = espeakSpeech("What are your opening hours?", 8000);
  const out = quietLine(S);
  for (let at = PHRASE_AT_S; at + phrase.length / 8000 + 5 < S; at += PHRASE_EVERY_S) {
    out.set(phrase, Math.round(at * 8000));
  }
  return out;
}

async function main(srtp: boolean): Promise<Record<string, unknown>> {
  const timeline = callerTimeline();
  const timelinePath = join(dir, "caller.s16");
  writeTimeline(timelinePath, timeline);

  // A fixed wait (max = min), so every turn is confirmed exactly MIN_EOU_MS after its end: the
  // end-of-turn rule's own wait (0.6–1.2 s, from the words) is not what this benchmark measures.
  const baseConfig = `agent:\n  minEndOfTurnMs: ${MIN_EOU_MS}\n  maxEndOfTurnMs: ${MIN_EOU_MS}\n`;
  const outbound = OUTBOUND ? { uasPort: await freePort() } : undefined;
  const { svc, svcLog, bridge, bridgeUrl, bridgeLog, configPath, bridgeToken, target } =
    await startBenchProcesses({
      transport: TRANSPORT,
      ...(outbound ? { outbound } : {}),
      rtpPorts: RTP_PORTS,
      srtp,
      ...(TLS ? { tls: selfSignedCertificate() } : {}),
      ...(srtp ? { run: "srtp" } : {}),
      dir,
      bridgeConfig: baseConfig,
      bridgeFlags: CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${CPU_PROF}`] : [],
      // --api: the bridge built with the TypeScript API, its agent's turn-taking from the environment.
      ...(API
        ? { bridgeEntry: ["bench/lib/api-bridge.ts"], bridgeEnv: { BENCH_MIN_EOU_MS: String(MIN_EOU_MS) } }
        : {}),
      children,
      ...(NICE !== undefined ? { nice: NICE } : {}),
      ...SERVICE,
    });
  const bridgePid = bridge.pid!;

  // Warm-up (code paths compiled, pools filled), then the idle footprint.
  await target.warmUp(timeline.subarray(0, 12 * 8000));
  await new Promise((r) => setTimeout(r, 1500));
  const idleRssMb = processRssMb(bridgePid);

  // The load: call i starts at t0 + i·ramp/N, dealt round-robin to the load generators.
  const t0 = Date.now() + 2000;
  const starts = Array.from({ length: N }, (_, i) => t0 + Math.round((i * RAMP_S * 1000) / N));
  const window: [number, number] = [t0 + (RAMP_S + 1) * 1000, t0 + S * 1000 - 500];
  if (window[1] - window[0] < 3000) throw new Error("--seconds too short for a measuring window: raise it");
  const loads = Array.from({ length: K }, (_, k) => {
    const spec = target.loadSpec({
      timelinePath,
      seconds: S,
      startsAtMs: starts.filter((_, i) => i % K === k),
      windowMs: window,
      bridgeToken,
    });
    const run = srtp ? "srtp-" : "";
    const specPath = join(dir, `load-${run}${k}.json`);
    writeFileSync(specPath, JSON.stringify(spec));
    const out = join(dir, `load-${run}${k}.out.json`);
    const child = spawnNode(
      [
        ...(LG_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${LG_CPU_PROF}`] : []),
        target.loadScript,
        specPath,
        out,
      ],
      process.env,
      join(dir, `load-${run}${k}.log`),
      NICE,
    );
    children.push(child);
    return { child, out };
  });

  // The window: CPU of the bridge and the service at both ends, the bridge's RSS every second.
  const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
  await sleepUntil(window[0]);
  await bridgeLoopLagMs(bridgeUrl); // resets the bridge's lag histogram: what follows is the window's
  const cpuNow = () => ({
    bridge: processCpuUs(bridgePid),
    main: mainThreadCpuUs(bridgePid),
    svc: processCpuUs(svc.pid!),
    machine: machineBusyUs(),
  });
  const cpu0 = cpuNow();
  const rss: number[] = [];
  let activeCalls = -1;
  const mid = (window[0] + window[1]) / 2;
  while (Date.now() < window[1] - 1000) {
    await sleepUntil(Math.min(window[1], Date.now() + 1000));
    rss.push(processRssMb(bridgePid));
    if (activeCalls < 0 && Date.now() >= mid) activeCalls = await readyCalls(bridgeUrl);
  }
  await sleepUntil(window[1]);
  const cpu1 = cpuNow();
  const loopLag = await bridgeLoopLagMs(bridgeUrl);
  const sendLate = await bridgeRtpSendLateMs(bridgeUrl);
  const windowS = (window[1] - window[0]) / 1000;

  const reports: LoadReport[] = [];
  for (const l of loads) {
    const code = await exited(l.child, (S + RAMP_S + 90) * 1000);
    if (code !== 0)
      throw new Error(
        `load generator exited ${code}: ${readFileSync(`${l.out.replace(".out.json", ".log")}`, "utf8").slice(-2000)}`,
      );
    reports.push(JSON.parse(readFileSync(l.out, "utf8")) as LoadReport);
  }
  const loadSpan: [number, number] = [t0 - 1000, Date.now()]; // after the warm-up, before the agents

  // The agents phase (Twilio): agent choice and greeting timing, without and with a webhook.
  const agents =
    TRANSPORT === "twilio" && PICK_CALLS > 0
      ? await agentsPhase({
          bridgeUrl,
          bridgeLog,
          configPath,
          baseConfig,
          authToken: TWILIO_TOKEN,
          bridgeToken,
          calls: PICK_CALLS,
        })
      : {};

  // --outbound: the set-up cost on its own, the bridge otherwise idle.
  const setup = outbound
    ? {
        outbound: true,
        path: "POST /calls -> bridge UAC -> load generator's callee (200 with SDP) -> session greets; caller speaks as inbound",
        ...(await outboundSetupCost({
          url: bridgeUrl,
          token: bridgeToken,
          uasPort: outbound.uasPort,
          bridgePid,
          sip: await bridgeSipAddress(bridgeLog),
          calls: SETUP_CALLS,
          holdS: 0.5,
        })),
      }
    : {};

  await stopProcess(bridge, 40_000);
  await stopProcess(svc, 10_000);

  const sorted = [...rss].sort((a, b) => a - b);
  const result = summarize({
    transport: TRANSPORT,
    calls: N,
    seconds: S,
    windowS,
    bridgeCpuUs: cpu1.bridge - cpu0.bridge,
    bridgeMainThreadCpuUs: cpu1.main - cpu0.main,
    serviceCpuUs: cpu1.svc - cpu0.svc,
    idleRssMb,
    loadedRssMb: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
    activeCallsMidWindow: activeCalls,
    machineBusyUs: cpu1.machine - cpu0.machine,
    bridgeLoopLagMs: loopLag,
    rtpSendLateMs: sendLate,
    minEndOfTurnMs: MIN_EOU_MS,
    reniced: NICE !== undefined,
    loads: reports,
    bridgeEnds: bridgeCallEnds(readFileSync(bridgeLog, "utf8"), TRANSPORT),
    ...serviceLogFacts(readFileSync(svcLog, "utf8"), loadSpan),
  });
  return { ...result, bridge: API ? ("api" as const) : ("cli" as const), ...agents, ...setup };
}

/** What the service played (--latency, --faults) and did over the load window, from its log. */
function serviceLogFacts(log: string, span: [number, number]) {
  return {
    latency: LATENCY.description,
    chatRequests: chatRequestsInLog(log, span),
    faults: { description: FAULTS.description, played: faultsInLog(log, span) },
  };
}

/** Where the bridge listens for SIP over UDP (its log says). */
async function bridgeSipAddress(bridgeLog: string): Promise<{ address: string; port: number }> {
  const line = await waitForLine(bridgeLog, /"udpPort":(\d+)[^\n]*"sip: listening"/, 5000);
  return { address: "127.0.0.1", port: Number(line[1]) };
}

/** A certificate for 127.0.0.1 made for the run (the load generator does not check it). */
function selfSignedCertificate(): { cert: string; key: string } {
  const cert = join(dir, "sip-cert.pem");
  const key = join(dir, "sip-key.pem");
  execFileSync(
    "openssl",
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1"].concat([
      "-subj",
      "/CN=127.0.0.1",
    ]),
    { stdio: "ignore" },
  );
  return { cert, key };
}

try {
  if (!SRTP) console.log(JSON.stringify({ ...(await main(false)), ...(TLS ? { signalling: "tls" } : {}) }));
  else {
    // The same calls twice in one invocation, plain then SRTP: the overhead is their difference.
    const plain = await main(false);
    const secure = await main(true);
    const overhead =
      (Number(secure.bridge_cpu_us_per_call_s) / Number(plain.bridge_cpu_us_per_call_s) - 1) * 100;
    console.log(
      JSON.stringify({
        ...secure,
        srtp: "AES_CM_128_HMAC_SHA1_80",
        // The ciphers libsrtp2 was built on (native/build.sh): "openssl", or Debian's "nss" build.
        srtp_crypto: rtpSender().srtpCrypto,
        signalling: TLS ? "tls" : "udp",
        plain_bridge_cpu_us_per_call_s: plain.bridge_cpu_us_per_call_s,
        plain_frame_lateness_ms_p99: plain.frame_lateness_ms_p99,
        plain_dropped_frames: plain.dropped_frames,
        plain_bridge_loop_lag_ms_max: plain.bridge_loop_lag_ms_max,
        plain_other_cpu_cores: plain.other_cpu_cores,
        srtp_cpu_overhead_pct: Math.round(overhead * 10) / 10,
        srtp_cpu_overhead_target_pct: 15,
      }),
    );
  }
} catch (err) {
  process.stderr.write(`bench calls: ${(err as Error).stack ?? err}\nlogs kept in ${dir}\n`);
  for (const c of children) c.kill("SIGKILL");
  process.exitCode = 1;
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  if (!process.exitCode && !process.argv.includes("--keep")) rmSync(dir, { recursive: true, force: true });
  else if (process.argv.includes("--keep")) process.stderr.write(`bench calls: logs kept in ${dir}\n`);
}
