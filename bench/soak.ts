// `npm run bench -- soak [--calls N] [--minutes M] [--transport twilio|sip] [--window-min W]
//   [--warmup-min U] [--single] [--lg-procs K] [--ramp-s R] [--rtp-ports LOW-HIGH] [--renice
//   [--nice-others N] [--nice-service N]] [--keep]`
//
// Calls that each last the whole run, against a separate bridge process (the processes of
// `npm run bench -- calls`, bench/lib/calls-setup.ts), with figures per window of W minutes
// (default 5) and a final line over the whole run: what an hour does to the bridge.
//
// Every caller repeats a 30 s cycle (stream time from its start): "What are your opening hours?"
// at 0 s and at 8 s, "Sorry, where is your shop?" at 11.2 s, over the agent's reply to the second
// question (a barge-in: the reply is cut and the new question answered), keys 1 and # at 21 s
// (a keypad turn). Calls start evenly over R seconds (default min(30, M·60/4): one cycle, so their
// turns fall at every phase of it, not all at once); the first window
// starts R + 1 s after the first call.
//
// Per window (one JSON line each, `window` 1, 2, …) and for the run (`window: "all"`):
//   rss_mb, heap_used_mb, external_mb: the bridge's RSS at the window's end, V8 heap used and
//     memory outside it (ArrayBuffers) from its /metrics;
//   rss_slope_mb_per_min: least squares over the RSS sampled every second from the end of the
//     warm-up (U minutes after the first window starts, default 5) to the window's end; null
//     while still warming up;
//   frame_lateness_ms_p99, gap_frames: the agent's frames as `bench calls` times them
//     (calls-frames.ts for Twilio, rtp-lateness.ts for SIP), from the frames that arrived in the
//     window, each timed by the kernel's receive stamp (when the bridge sent it, on loopback: SIP's
//     datagrams by SIOCGSTAMPNS, Twilio's WebSocket frames read by native/bench/ws-stamps.c), and
//     frame_read_lateness_ms_p99 (Twilio also gap_frames_read), the same by the time the load
//     generator's loop read them (its own delay included; what the figures were before);
//   gc_pause_ms_max: the longest GC pause of the bridge's main thread (--trace-gc, which the
//     bridge runs with here), gc_pause_ms_max_workers the same for its worker threads;
//   loop_lag_ms_max: the bridge's event-loop lag, beyond the 50 ms sampling (its /metrics);
//   service_cpu_us_per_call_s: the local service's CPU per call-second (the chat engine's
//     prompt work included: flat when the history sent per turn stops growing);
//   the final line adds frame_lateness_ms_p99_worst_window, the highest of the windows' p99s: the
//     target holds for every window, so that is what it is judged on;
//   plus bridge CPU, the load generators' RSS and loop delay (max; per window also the worst one's
//   p99, which Twilio's lateness and SIP's read lateness include), other_cpu_cores (work of other
//   programs on the machine).
// --single: one call (default 60 minutes) with the recording on; the final line adds what the
// call left: its record's turns and events (GET /calls/{id}) and the recording's length.
import type { ChildProcess } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bearer } from "../src/service/engines/upstream.ts";
import { numberArg, stringArg } from "./lib/args.ts";
import type { BenchTransport } from "./lib/calls-bridge-ends.ts";
import {
  bridgeLoopLagMs,
  exited,
  machineBusyUs,
  mainThreadSchedUs,
  processCpuUs,
  processRssMb,
  spawnNode,
  stopProcess,
} from "./lib/calls-procs.ts";
import {
  type BenchProcesses,
  quietLine,
  readyCalls,
  startBenchProcesses,
  writeTimeline,
} from "./lib/calls-setup.ts";
import { espeakSpeech, round } from "./lib/measure.ts";
import { type GcPauses, GcTrace } from "./lib/soak-gc.ts";
import type { SoakLoadSpec, SoakPlan } from "./lib/soak-load.ts";
import { LatenessHistogram, type SoakWindowReport } from "./lib/soak-window.ts";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  console.log(`usage: npm run bench -- soak [--calls N (200)] [--minutes M (60)] [--transport twilio|sip]
  [--window-min W (5)] [--warmup-min U (5)] [--single] [--lg-procs K] [--ramp-s R] [--rtp-ports LOW-HIGH]
  [--renice [--nice-others N] [--nice-service N]] [--keep]
Calls that each last the whole run; one JSON line per W-minute window and one for the run.
--single: one call (default 60 minutes) with recording on; the last line adds its record and recording.
env BENCH_CALLS_BRIDGE_FLAGS: extra Node flags for the bridge; BENCH_SOAK_LG_FLAGS: the same for the load
generators (e.g. --cpu-prof --cpu-prof-dir=DIR). See docs/benchmarks.md.`);
  process.exit(0);
}
const SINGLE = process.argv.includes("--single");
/** Extra Node flags for the load generators (profiling them: they measure the bridge's timing). */
const LG_FLAGS = (process.env.BENCH_SOAK_LG_FLAGS ?? "").split(" ").filter(Boolean);
const TRANSPORT = ((): BenchTransport => {
  const t = stringArg("transport") ?? "twilio";
  if (t !== "twilio" && t !== "sip")
    throw new Error(`--transport: expected twilio or sip, got ${JSON.stringify(t)}`);
  return t;
})();
const N = SINGLE ? 1 : Math.round(numberArg("calls", 200));
const MINUTES = numberArg("minutes", 60);
const S = MINUTES * 60;
const WINDOW_S = numberArg("window-min", 5) * 60;
const WARMUP_S = numberArg("warmup-min", 5) * 60;
const K = Math.round(numberArg("lg-procs", N > 100 ? 2 : 1));
/** Each caller's cycle, s: a question at 0 and 8 s, a barge-in at 11.2 s, keys at 21 s. */
const CYCLE_S = 30;
/**
 * Calls start evenly over one cycle by default, so their turns fall at every phase of it, as a
 * hotline's calls do. Started within a few seconds (the default until 2026-11-29: 5 s), every call
 * asks its question within those seconds of every other, every 30 s for the whole run: 200 turns'
 * requests and streams alive at once, then few, which no line sees for an hour.
 */
const RAMP_S = numberArg("ramp-s", Math.min(CYCLE_S, S / 4));
const RTP_PORTS = stringArg("rtp-ports") ?? "20000-20999";
const NICE = process.argv.includes("--renice") ? -10 : undefined;
/** A nice value given as --NAME, or undefined when it is not given. */
function niceArg(name: string): number | undefined {
  const v = stringArg(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < -20 || n > 19)
    throw new Error(`--${name}: expected a nice value, an integer from -20 to 19, got ${JSON.stringify(v)}`);
  return n;
}
/**
 * --nice-others N: the load generators (and the service, unless --nice-service says otherwise) at
 * nice N instead of the bridge's −10 — stand-ins for Twilio or a SIP trunk and for the hosted API,
 * which do not share the bridge's cores in production, then run beside it rather than take turns
 * with it. The load generators' own delays do not enter the lateness figures (the kernel's receive
 * stamps time every agent frame; on Twilio the thread that reads and stamps them runs at the
 * bridge's nice, so a starved load generator cannot stamp them late), so at 19 they take only what
 * the bridge leaves.
 */
const NICE_OTHERS = niceArg("nice-others") ?? NICE;
/**
 * --nice-service N: the local service's nice. Not 19 with the bridge's threads at −10: the hosted
 * API it stands in for answers at its own pace whatever the bridge does, while a service starved
 * by the bridge can be late with the agent's audio (a gap the bridge did not make).
 */
const NICE_SERVICE = niceArg("nice-service") ?? NICE_OTHERS;
const MIN_EOU_MS = 600;
/** The targets for an hour at 200 calls (lateness: every window's p99). */
const TARGETS = {
  rss_slope_mb_per_min: 1,
  frame_lateness_ms_p99_worst_window: 20,
  gap_frames: 0,
  gc_pause_ms_max: 20,
  service_cpu_last_vs_first: 1.2,
} as const;
if (WINDOW_S < 30) throw new Error("--window-min: at least 0.5 (30 s)");

const dir = mkdtempSync(join(tmpdir(), "bench-soak-"));
const children: ChildProcess[] = [];
const killAll = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
};
const deadline = setTimeout(
  () => {
    process.stderr.write("bench soak: overall time limit reached, stopping\n");
    killAll();
    process.exit(3);
  },
  (S + RAMP_S + 240) * 1000,
);
deadline.unref();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** The caller's side: the 30 s cycle repeated over the whole call, and where its speech and keys are. */
interface CallerPlan {
  timeline: Int16Array;
  speechStartsMs: number[];
  dtmf: SoakPlan["dtmf"];
}

function callerPlan(): CallerPlan {
  const ask = espeakSpeech("What are your opening hours?", 8000);
  const barge = espeakSpeech("Sorry, where is your shop?", 8000);
  const timeline = quietLine(S);
  const speechStartsMs: number[] = [];
  const dtmf: SoakPlan["dtmf"] = [];
  const end = S - 3; // nothing in the last seconds: the reply would be cut by the hang-up
  for (let c = 0; c + CYCLE_S <= end + CYCLE_S; c += CYCLE_S) {
    for (const [pcm, at] of [
      [ask, c],
      [ask, c + 8],
      [barge, c + 11.2],
    ] as const) {
      if (at + pcm.length / 8000 + 5 > end) continue;
      timeline.set(pcm, Math.round(at * 8000));
      speechStartsMs.push(Math.round(at * 1000));
    }
    if (c + 21 + 5 <= end)
      dtmf.push({ digit: "1", atMs: (c + 21) * 1000 }, { digit: "#", atMs: (c + 21.3) * 1000 });
  }
  return { timeline, speechStartsMs, dtmf };
}

/** Least-squares slope of (t ms, v) points, per minute. */
function slopePerMin(points: readonly [number, number][]): number | null {
  if (points.length < 10) return null;
  let st = 0;
  let sv = 0;
  for (const [t, v] of points) {
    st += t;
    sv += v;
  }
  const mt = st / points.length;
  const mv = sv / points.length;
  let num = 0;
  let den = 0;
  for (const [t, v] of points) {
    num += (t - mt) * (v - mv);
    den += (t - mt) ** 2;
  }
  return den > 0 ? (num / den) * 60_000 : null;
}

async function bridgeMemoryMb(url: string): Promise<{ heapUsed: number; external: number }> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const get = (name: string) =>
      Number(text.match(new RegExp(`^${name} ([0-9.eE+-]+)`, "m"))?.[1]) / 2 ** 20;
    return { heapUsed: get("nodejs_heap_size_used_bytes"), external: get("nodejs_external_memory_bytes") };
  } catch {
    return { heapUsed: Number.NaN, external: Number.NaN };
  }
}

interface Cpu {
  bridge: number;
  /** The bridge's main thread: ran, and waited for a core while runnable. */
  mainRun: number;
  mainWait: number;
  svc: number;
  lg: number;
  machine: number;
}

/** Cores' worth of CPU that programs other than the benchmark's used between two readings. */
function otherCores(from: Cpu, to: Cpu, seconds: number): number {
  const ours = to.bridge - from.bridge + (to.svc - from.svc) + (to.lg - from.lg);
  return (to.machine - from.machine - ours) / 1e6 / seconds;
}

/** The load generators' histograms of one window merged, and added to the run's (`run`). */
function windowHistogram(
  parts: Array<[readonly [number, number][], number] | undefined>,
  run: LatenessHistogram,
): LatenessHistogram {
  const hist = new LatenessHistogram();
  for (const part of parts) if (part) hist.merge(...part);
  run.merge(hist.toSparse(), hist.max);
  return hist;
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/** The local service and the bridge, configured for calls that last the run. */
function startProcesses(recordingDir: string): Promise<BenchProcesses> {
  return startBenchProcesses({
    transport: TRANSPORT,
    rtpPorts: RTP_PORTS,
    dir,
    // A fixed end-of-turn wait, as in `bench calls`; calls allowed to last the run.
    bridgeConfig:
      `agent:\n  minEndOfTurnMs: ${MIN_EOU_MS}\n  maxEndOfTurnMs: ${MIN_EOU_MS}\n` +
      `  maxCallSeconds: ${Math.ceil(S + 600)}\n` +
      (SINGLE ? `  recordingDir: ${JSON.stringify(recordingDir)}\n` : ""),
    // The GC pauses per window; BENCH_CALLS_BRIDGE_FLAGS (e.g. GC settings to compare) is added.
    bridgeFlags: ["--trace-gc"],
    children,
    ...(NICE !== undefined ? { nice: NICE } : {}),
    serviceNice: NICE_SERVICE,
  });
}

/** When the calls start and the windows fall, epoch ms. */
interface Schedule {
  starts: number[];
  /** The first window's start. */
  first: number;
  windows: [number, number][];
  /** The end of the warm-up: the RSS slope is over the samples from here on. */
  warmEnd: number;
}

function schedule(): Schedule {
  const t0 = Date.now() + 2000;
  const starts = Array.from({ length: N }, (_, i) => t0 + Math.round((i * RAMP_S * 1000) / N));
  const first = t0 + (RAMP_S + 1) * 1000;
  const count = Math.floor((t0 + S * 1000 - 500 - first) / (WINDOW_S * 1000));
  if (count < 1)
    throw new Error("--minutes too short for one window of --window-min: raise it or shorten the window");
  const windows = Array.from({ length: count }, (_, i): [number, number] => [
    first + i * WINDOW_S * 1000,
    first + (i + 1) * WINDOW_S * 1000,
  ]);
  return { starts, first, windows, warmEnd: first + WARMUP_S * 1000 };
}

/** A load generator (bench/lib/soak-load.ts) and the file it writes its window lines to. */
interface Load {
  child: ChildProcess;
  out: string;
}

/** K load generators, each placing every K-th call. */
function startLoads(procs: BenchProcesses, plan: CallerPlan, timelinePath: string, at: Schedule): Load[] {
  return Array.from({ length: K }, (_, k) => {
    const spec: SoakLoadSpec = {
      ...procs.target.loadSpec({
        timelinePath,
        seconds: S,
        startsAtMs: at.starts.filter((_, i) => i % K === k),
        windowMs: [at.first, at.windows.at(-1)![1]],
        bridgeToken: procs.bridgeToken,
      }),
      soak: {
        speechStartsMs: plan.speechStartsMs,
        dtmf: plan.dtmf,
        windows: at.windows,
        // A load generator starved at a lower nice must not stamp the bridge's frames late.
        ...(NICE !== undefined && NICE_OTHERS !== undefined && NICE_OTHERS > NICE
          ? { stampReaderNice: NICE }
          : {}),
      },
    };
    const specPath = join(dir, `load-${k}.json`);
    writeFileSync(specPath, JSON.stringify(spec));
    const out = join(dir, `load-${k}.out.jsonl`);
    const child = spawnNode(
      [...LG_FLAGS, "bench/lib/soak-load.ts", specPath, out],
      process.env,
      join(dir, `load-${k}.log`),
      NICE_OTHERS,
    );
    children.push(child);
    return { child, out };
  });
}

/** The run under way: its processes, load generators and schedule. */
interface Soak {
  procs: BenchProcesses;
  loads: Load[];
  at: Schedule;
  /** The bridge's RSS before the calls. */
  idleRssMb: number;
}

function cpuNow({ procs, loads }: Soak): Cpu {
  const bridgePid = procs.bridge.pid!;
  return {
    bridge: processCpuUs(bridgePid),
    mainRun: mainThreadSchedUs(bridgePid).runUs,
    mainWait: mainThreadSchedUs(bridgePid).waitUs,
    svc: processCpuUs(procs.svc.pid!),
    lg: loads.reduce((n, l) => n + (l.child.exitCode === null ? processCpuUs(l.child.pid!) : 0), 0),
    machine: machineBusyUs(),
  };
}

/** What the run's line takes from its windows. */
class RunTotals {
  readonly hist = new LatenessHistogram();
  readonly readHist = new LatenessHistogram();
  worstP99 = 0;
  worstReadP99 = 0;
  gapFrames = 0;
  /** Twilio with stamps only: the gap frames by read time. */
  readGapFrames: number | undefined;
  gcMain = 0;
  gcWorkers = 0;
  lag = 0;
  lgDelay = 0;
  /** The bridge's RSS, sampled every second: [epoch ms, MB]. */
  readonly rss: [number, number][] = [];
  readonly svcPerWindow: number[] = [];
  /** The last window's line. */
  last: Record<string, unknown> = {};
}

/** What is read at a window's end. */
interface WindowEnd {
  cpu: Cpu;
  lag: { p99: number; max: number };
  mem: { heapUsed: number; external: number };
  pauses: GcPauses;
  rssMb: number;
  lgRssMb: number;
  activeCalls: number;
  reports: SoakWindowReport[];
}

async function readWindowEnd(soak: Soak, gc: GcTrace, window: number): Promise<WindowEnd> {
  const { bridge, bridgeUrl } = soak.procs;
  const cpu = cpuNow(soak);
  const lag = await bridgeLoopLagMs(bridgeUrl);
  const mem = await bridgeMemoryMb(bridgeUrl);
  const pauses = gc.read();
  const rssMb = processRssMb(bridge.pid!);
  const lgRssMb = soak.loads.reduce(
    (n, l) => n + (l.child.exitCode === null ? processRssMb(l.child.pid!) : 0),
    0,
  );
  const activeCalls = await readyCalls(bridgeUrl);
  const reports = await loadReports(soak.loads, window);
  return { cpu, lag, mem, pauses, rssMb, lgRssMb, activeCalls, reports };
}

/** The load generators' lines for a window (0 the first), each awaited for up to 10 s. */
async function loadReports(loads: Load[], window: number): Promise<SoakWindowReport[]> {
  const reports: SoakWindowReport[] = [];
  for (const load of loads) {
    const give = Date.now() + 10_000;
    for (;;) {
      const lines = existsSync(load.out)
        ? (await readFile(load.out, "utf8")).split("\n").filter(Boolean)
        : [];
      const line = lines.map((l) => JSON.parse(l) as SoakWindowReport).find((r) => r.window === window);
      if (line) {
        reports.push(line);
        break;
      }
      if (Date.now() > give || load.child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  return reports;
}

/** Window `i`'s line (its figures also added to the run's `totals`). */
function windowLine(soak: Soak, totals: RunTotals, i: number, cpu0: Cpu, end: WindowEnd) {
  const { reports, pauses, lag, cpu: cpu1 } = end;
  const [w0, w1] = soak.at.windows[i]!;
  const hist = windowHistogram(
    reports.map((r) => [r.lateness, r.latenessMax]),
    totals.hist,
  );
  const p99 = hist.percentile(99);
  totals.worstP99 = Math.max(totals.worstP99, p99);
  const readHist = windowHistogram(
    reports.map((r) => (r.readLateness ? [r.readLateness, r.readLatenessMax ?? 0] : undefined)),
    totals.readHist,
  );
  const readP99 = readHist.percentile(99); // NaN without read figures (Twilio)
  if (readHist.total) totals.worstReadP99 = Math.max(totals.worstReadP99, readP99);
  const gapFrames = reports.reduce((n, r) => n + r.gapFrames, 0);
  totals.gapFrames += gapFrames;
  const readGaps = reports.some((r) => r.readGapFrames !== undefined);
  const readGapFrames = reports.reduce((n, r) => n + (r.readGapFrames ?? 0), 0);
  if (readGaps) totals.readGapFrames = (totals.readGapFrames ?? 0) + readGapFrames;
  totals.gcMain = Math.max(totals.gcMain, pauses.mainMax);
  totals.gcWorkers = Math.max(totals.gcWorkers, pauses.workersMax);
  totals.lag = Math.max(totals.lag, lag.max);
  const lgDelayMax = Math.max(...reports.map((r) => r.loopDelayMsMax));
  totals.lgDelay = Math.max(totals.lgDelay, lgDelayMax);
  const windowS = (w1 - w0) / 1000;
  const perCallS = N * windowS;
  const svcCpu = (cpu1.svc - cpu0.svc) / perCallS;
  totals.svcPerWindow.push(svcCpu);
  const warmEnd = soak.at.warmEnd;
  const warm = totals.rss.filter(([t]) => t >= warmEnd);
  return {
    bench: "soak",
    transport: TRANSPORT,
    calls: N,
    window: i + 1,
    minutes: round((w1 - soak.at.first) / 60_000, 2),
    rss_mb: round(end.rssMb, 1),
    heap_used_mb: round(end.mem.heapUsed, 1),
    external_mb: round(end.mem.external, 1),
    rss_slope_mb_per_min: w1 >= warmEnd + 60_000 ? round(slopePerMin(warm) ?? Number.NaN, 2) : null,
    frame_lateness_ms_p99: round(p99, 2),
    frame_lateness_ms_max: round(hist.max, 1),
    ...(readHist.total ? { frame_read_lateness_ms_p99: round(readP99, 2) } : {}),
    gap_frames: gapFrames,
    ...(readGaps ? { gap_frames_read: readGapFrames } : {}),
    agent_frames: hist.total,
    gc_pause_ms_max: round(pauses.mainMax, 1),
    gc_pause_ms_max_workers: round(pauses.workersMax, 1),
    gc_major: pauses.major,
    gc_pause_ms_total: round(pauses.mainTotal, 0),
    loop_lag_ms_max: round(lag.max, 1),
    loop_lag_ms_p99: round(lag.p99, 1),
    main_thread_cpu_pct: round(((cpu1.mainRun - cpu0.mainRun) / 1e6 / windowS) * 100, 1),
    main_thread_runq_wait_ms_per_s: round((cpu1.mainWait - cpu0.mainWait) / 1e3 / windowS, 1),
    service_cpu_us_per_call_s: round(svcCpu, 0),
    bridge_cpu_us_per_call_s: round((cpu1.bridge - cpu0.bridge) / perCallS, 0),
    rss_mb_per_call: round((end.rssMb - soak.idleRssMb) / N, 2),
    active_calls: end.activeCalls,
    lg_rss_mb: round(end.lgRssMb, 0),
    lg_cpu_us_per_call_s: round((cpu1.lg - cpu0.lg) / perCallS, 0),
    lg_loop_delay_ms_max: round(lgDelayMax, 1),
    // The worst load generator's p99: a stall of its own shows in the lateness it measures.
    lg_loop_delay_ms_p99: round(Math.max(...reports.map((r) => r.loopDelayMsP99)), 1),
    call_errors: Math.max(0, ...reports.map((r) => r.callErrors)),
    other_cpu_cores: round(otherCores(cpu0, cpu1, windowS), 2),
  };
}

/** The windows one after another, each line printed at its end; the run's totals and CPU readings. */
async function runWindows(soak: Soak): Promise<{ totals: RunTotals; cpuStart: Cpu; cpuEnd: Cpu }> {
  const { bridge, bridgeUrl, bridgeLog } = soak.procs;
  const gc = new GcTrace(bridgeLog);
  await sleepUntil(soak.at.first);
  await bridgeLoopLagMs(bridgeUrl); // resets the lag histogram: what follows is the first window's
  gc.read(); // GCs of the start and the ramp are not the windows'
  const cpuStart = cpuNow(soak);
  let cpu0 = cpuStart;
  const totals = new RunTotals();
  for (let i = 0; i < soak.at.windows.length; i++) {
    const w1 = soak.at.windows[i]![1];
    while (Date.now() < w1 - 1000) {
      await sleepUntil(Math.min(w1, Date.now() + 1000));
      totals.rss.push([Date.now(), processRssMb(bridge.pid!)]);
    }
    await sleepUntil(w1);
    const end = await readWindowEnd(soak, gc, i);
    const line = windowLine(soak, totals, i, cpu0, end);
    console.log(JSON.stringify(line));
    totals.last = line;
    cpu0 = end.cpu;
  }
  return { totals, cpuStart, cpuEnd: cpu0 };
}

/** The run's line: the whole run from the first window's start to the last one's end. */
function runLine(
  soak: Soak,
  run: { totals: RunTotals; cpuStart: Cpu; cpuEnd: Cpu },
): Record<string, unknown> {
  const { totals: all, cpuStart: runCpu0, cpuEnd } = run;
  const runS = (soak.at.windows.at(-1)![1] - soak.at.first) / 1000;
  return {
    bench: "soak",
    transport: TRANSPORT,
    calls: N,
    window: "all",
    minutes: round(runS / 60, 2),
    window_minutes: WINDOW_S / 60,
    warmup_minutes: WARMUP_S / 60,
    rss_mb: all.last.rss_mb,
    heap_used_mb: all.last.heap_used_mb,
    idle_rss_mb: round(soak.idleRssMb, 1),
    rss_slope_mb_per_min: round(slopePerMin(all.rss.filter(([t]) => t >= soak.at.warmEnd)) ?? Number.NaN, 2),
    frame_lateness_ms_p99: round(all.hist.percentile(99), 2),
    frame_lateness_ms_p99_worst_window: round(all.worstP99, 2),
    frame_lateness_ms_max: round(all.hist.max, 1),
    ...(all.readHist.total
      ? {
          frame_read_lateness_ms_p99: round(all.readHist.percentile(99), 2),
          frame_read_lateness_ms_p99_worst_window: round(all.worstReadP99, 2),
        }
      : {}),
    gap_frames: all.gapFrames,
    ...(all.readGapFrames !== undefined ? { gap_frames_read: all.readGapFrames } : {}),
    gc_pause_ms_max: round(all.gcMain, 1),
    gc_pause_ms_max_workers: round(all.gcWorkers, 1),
    loop_lag_ms_max: round(all.lag, 1),
    main_thread_runq_wait_ms_per_s: round((cpuEnd.mainWait - runCpu0.mainWait) / 1e3 / runS, 1),
    service_cpu_us_per_call_s: round((cpuEnd.svc - runCpu0.svc) / (N * runS), 0),
    service_cpu_last_vs_first: round(all.svcPerWindow.at(-1)! / all.svcPerWindow[0]!, 2),
    bridge_cpu_us_per_call_s: round((cpuEnd.bridge - runCpu0.bridge) / (N * runS), 0),
    lg_loop_delay_ms_max: round(all.lgDelay, 1),
    lg_cpu_us_per_call_s: round((cpuEnd.lg - runCpu0.lg) / (N * runS), 0),
    other_cpu_cores: round(otherCores(runCpu0, cpuEnd, runS), 2),
    bridge_nice: NICE ?? 0,
    others_nice: NICE_OTHERS ?? 0,
    service_nice: NICE_SERVICE ?? 0,
  };
}

async function main(): Promise<void> {
  const plan = callerPlan();
  const timelinePath = join(dir, "caller.s16");
  writeTimeline(timelinePath, plan.timeline);
  const recordingDir = join(dir, "recordings");
  const procs = await startProcesses(recordingDir);
  await procs.target.warmUp(plan.timeline.subarray(0, 12 * 8000));
  await new Promise((r) => setTimeout(r, 1500));
  const idleRssMb = processRssMb(procs.bridge.pid!);
  const at = schedule();
  const loads = startLoads(procs, plan, timelinePath, at);
  const soak: Soak = { procs, loads, at, idleRssMb };
  const final = runLine(soak, await runWindows(soak));

  for (const l of loads) {
    const code = await exited(l.child, (S + 120) * 1000);
    if (code !== 0)
      process.stderr.write(
        `bench soak: a load generator exited ${code} (its log: ${l.out.replace(".out.jsonl", ".log")})\n`,
      );
  }
  if (SINGLE) Object.assign(final, await singleCallLeft(procs.bridgeUrl, procs.bridgeToken, recordingDir));
  const missed = (Object.keys(TARGETS) as (keyof typeof TARGETS)[]).filter(
    (k) => !((final[k] as number) <= TARGETS[k]),
  );
  final.targets_missed = missed;
  await stopProcess(procs.bridge, 40_000);
  await stopProcess(procs.svc, 10_000);
  console.log(JSON.stringify(final));
}

/**
 * What the single call left: its record (turns, events), read with the bridge's token as any
 * program reads /calls, and its recording (seconds of audio, bytes).
 */
async function singleCallLeft(
  url: string,
  bridgeToken: string | undefined,
  recordingDir: string,
): Promise<Record<string, unknown>> {
  await new Promise((r) => setTimeout(r, 2000)); // the record's last lines, the recording's close
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`, { headers: bearer(bridgeToken) });
    if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const list = await get<{ calls: { callId: string }[] }>("/calls?limit=1");
  const callId = list.calls[0]?.callId;
  const record = callId
    ? await get<{ turns?: unknown[]; events?: unknown[]; endReason?: string }>(
        `/calls/${encodeURIComponent(callId)}`,
      )
    : {};
  const wavs = existsSync(recordingDir)
    ? readdirSync(recordingDir)
        .filter((f) => f.endsWith(".wav"))
        .map((f) => join(recordingDir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)
    : [];
  let recordingS = Number.NaN;
  let recordingBytes = 0;
  if (wavs[0]) {
    recordingBytes = statSync(wavs[0]).size;
    const fd = openSync(wavs[0], "r");
    const head = Buffer.alloc(44);
    readSync(fd, head, 0, 44, 0);
    closeSync(fd);
    const channels = head.readUInt16LE(22);
    const rate = head.readUInt32LE(24);
    const bits = head.readUInt16LE(34);
    recordingS = (recordingBytes - 44) / (rate * channels * (bits / 8));
  }
  return {
    record_turns: record.turns?.length ?? null,
    record_events: record.events?.length ?? null,
    record_end: record.endReason ?? null,
    recording_s: round(recordingS, 1),
    recording_mb: round(recordingBytes / 2 ** 20, 1),
  };
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench soak: ${(err as Error).stack ?? err}\nlogs kept in ${dir}\n`);
  killAll();
  process.exitCode = 1;
} finally {
  killAll();
  if (!process.exitCode && !process.argv.includes("--keep")) rmSync(dir, { recursive: true, force: true });
  else if (process.argv.includes("--keep")) process.stderr.write(`bench soak: logs kept in ${dir}\n`);
}
