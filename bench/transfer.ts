// `npm run bench -- transfer [--calls N] [--window-s W] [--rtp-ports LOW-HIGH]`: N warm transfers
// at once on SIP (#56), against a separate bridge process (`voice-bridge start`, the local service
// with the benchmark's synthetic engines, as `bench calls` runs them: bench/lib/calls-setup.ts).
// Callers and persons are this process's own SIP user agents (bench/lib/transfer-sip.ts) sending
// and hearing PCMU RTP (transfer-party.ts); the persons answer on the bridge's outbound proxy.
// What each call does and what is measured: bench/lib/transfer-calls.ts. The agent transfers to
// the number dialled ({{called}}), holds with a steady 400 Hz loop (so any gap in it shows) and
// briefs with a fixed text; the person accepts with keypad 1 (RFC 4733).
// Two phases on the same bridge, each with N calls live over a W-second window: N ordinary agent
// calls (a phrase every 8 s, answered), then the N transfers, measured once all are joined. Prints
// one JSON line:
//   hold_audio_gap_ms_max   the largest gap in the hold audio any caller received while held
//   join_ms_p50, _p90       from the person's key press to both hearing each other (the later of
//                           the first frame of the person's line at the caller and of the
//                           caller's at the person); each direction's p50 too (the person's
//                           line resumes 40 ms after the press: its key replaces its audio)
//   relay_cpu_ratio         the bridge process's CPU per call-second with N joined calls, over
//                           the same with N ordinary agent calls
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeWav } from "../codecs/wav.ts";
import { numberArg, stringArg } from "./lib/args.ts";
import { machineBusyUs, processRunUs, stopProcess, waitForLine } from "./lib/calls-procs.ts";
import { quietLine, readyCalls, startBenchProcesses } from "./lib/calls-setup.ts";
import { espeakSpeech, percentile, round } from "./lib/measure.ts";
import {
  type BenchCall,
  ordinaryCall,
  PersonsTrunk,
  transferCall,
  transferFigures,
} from "./lib/transfer-calls.ts";
import { TONE_HZ, tone } from "./lib/transfer-party.ts";
import { SipEndpoint } from "./lib/transfer-sip.ts";

const N = Math.round(numberArg("calls", 20));
const WINDOW_S = numberArg("window-s", 10);
const RTP_PORTS = stringArg("rtp-ports") ?? "39000-39499";
const BRIEF = "They ask about an order.";

const dir = mkdtempSync(join(tmpdir(), "bench-transfer-"));
const children: ChildProcess[] = [];
const deadline = setTimeout(
  () => {
    process.stderr.write("bench transfer: overall time limit reached, stopping\n");
    for (const c of children) c.kill("SIGKILL");
    process.exit(3);
  },
  (2 * WINDOW_S + 300) * 1000,
);
deadline.unref();

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The bridge's CPU (all threads) and the machine's, over `seconds` from now. */
async function cpuWindow(pid: number, svcPid: number, seconds: number) {
  const [b0, s0, m0, self0, t0] = [
    processRunUs(pid),
    processRunUs(svcPid),
    machineBusyUs(),
    process.cpuUsage(),
    Date.now(),
  ];
  await wait(seconds * 1000);
  const bridgeUs = processRunUs(pid) - b0;
  const self = process.cpuUsage(self0);
  const otherUs = machineBusyUs() - m0 - bridgeUs - (processRunUs(svcPid) - s0) - self.user - self.system;
  return {
    bridgeUs,
    wallS: (Date.now() - t0) / 1000,
    otherCores: Math.max(0, otherUs) / ((Date.now() - t0) * 1000),
  };
}

async function hangUpAll(calls: BenchCall<unknown>[], url: string): Promise<void> {
  await Promise.all(calls.map((c) => c.hangUp()));
  for (let i = 0; i < 100 && (await readyCalls(url)) !== 0; i++) await wait(100);
}

const persons = await PersonsTrunk.open();
const callers = await SipEndpoint.open();
try {
  const holdWav = join(dir, "hold.wav");
  writeFileSync(holdWav, encodeWav(tone(TONE_HZ.hold, 1000, 3000), 8000));
  const bridgeConfig = [
    "agent:",
    `  transferTarget: "{{called}}"`,
    "  transferMode: warm",
    `  transferHoldAudio: ${JSON.stringify(holdWav)}`,
    `  transferBrief: ${JSON.stringify(BRIEF)}`,
    "  transferAnswerSeconds: 30",
    "",
  ].join("\n");
  const procs = await startBenchProcesses({
    transport: "sip",
    rtpPorts: RTP_PORTS,
    dir,
    bridgeConfig,
    bridgeFlags: [],
    bridgeEnv: {
      SIP_CODECS: "pcmu",
      SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${persons.port}`,
      SIP_OUTBOUND_FROM: "+15550100",
      OUTBOUND_MAX_CONCURRENT: "1000",
      OUTBOUND_CALLS_PER_SECOND: "1000",
    },
    children,
  });
  const bridge = procs.target;
  const listening = await waitForLine(procs.bridgeLog, /"udpPort":(\d+)[^\n]*"sip: listening"/, 1000);
  const sipTarget = { address: "127.0.0.1", port: Number(listening[1]) };
  const phrase = espeakSpeech("What are your opening hours?", 8000);
  const line = quietLine(8);
  line.set(phrase, 3 * 8000);
  await bridge.warmUp(line);

  // Ordinary calls: all answered and past their greeting, then the window.
  const ordinary = await Promise.all(
    Array.from({ length: N }, (_, i) => ordinaryCall(sipTarget, callers, String(6000 + i), line)),
  );
  const ordinaryFailed = ordinary.flatMap((c) =>
    c.result.error ? [`${c.result.number}: ${c.result.error}`] : [],
  );
  await wait(4000);
  const base = await cpuWindow(procs.bridge.pid!, procs.svc.pid!, WINDOW_S);
  const ordinaryLive = N - ordinaryFailed.length;
  await hangUpAll(ordinary, procs.bridgeUrl);

  // The transfers, all at once; the window once every one is joined (or has failed).
  const hello = espeakSpeech("Hello?", 8000);
  const padded = new Int16Array(2400 + hello.length);
  padded.set(hello, 2400);
  const transfers = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      transferCall({ bridge: sipTarget, callers, persons, number: String(7000 + i), hello: padded }),
    ),
  );
  const figures = transferFigures(transfers.map((t) => t.result));
  const joinedWindow =
    figures.joined > 0 ? await cpuWindow(procs.bridge.pid!, procs.svc.pid!, WINDOW_S) : undefined;
  await hangUpAll(transfers, procs.bridgeUrl);

  const perCallS = (us: number, calls: number, s: number) => us / calls / s;
  const ordinaryUs = perCallS(base.bridgeUs, ordinaryLive, base.wallS);
  const joinedUs = joinedWindow
    ? perCallS(joinedWindow.bridgeUs, figures.joined, joinedWindow.wallS)
    : Number.NaN;
  console.log(
    JSON.stringify({
      bench: "transfer",
      path: "sip: bench callers -> bridge -> outbound proxy -> bench persons (pcmu, keypad 1 as RFC 4733)",
      transfers: figures.transfers,
      joined: figures.joined,
      hold_audio_gap_ms_max: round(Math.max(...figures.holdGapsMs), 1),
      hold_audio_gap_ms_p50: round(percentile(figures.holdGapsMs, 50), 1),
      held_ms_p50: round(percentile(figures.heldMs, 50), 0),
      join_ms_p50: round(percentile(figures.joinMs, 50), 0),
      join_ms_p90: round(percentile(figures.joinMs, 90), 0),
      join_caller_hears_person_ms_p50: round(percentile(figures.callerHearsPersonMs, 50), 0),
      join_person_hears_caller_ms_p50: round(percentile(figures.personHearsCallerMs, 50), 0),
      relay_cpu_ratio: round(joinedUs / ordinaryUs, 2),
      joined_cpu_us_per_call_s: round(joinedUs, 0),
      ordinary_cpu_us_per_call_s: round(ordinaryUs, 0),
      window_s: WINDOW_S,
      failures: [...ordinaryFailed.map((f) => `ordinary ${f}`), ...figures.failures],
      other_cpu_cores: round(Math.max(base.otherCores, joinedWindow?.otherCores ?? 0), 2),
      shared_machine: true,
    }),
  );
  await stopProcess(procs.bridge, 20_000);
  await stopProcess(procs.svc, 10_000);
} finally {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await Promise.all([persons.close(), callers.close()]);
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
