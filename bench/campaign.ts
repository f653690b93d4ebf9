// npm run bench -- campaign [--rows 10000] [--concurrency 200] [--pace 6000] [--hold-ms N]
//                           [--bridges 2] [--store sqlite|postgres] [--seconds 60]
//                           [--baseline-seconds SECONDS]
//   The campaign scheduler working one campaign: `--bridges` schedulers (each its own store
//   connection and instance name, as bridges are) share the rows through the real store (SQLite
//   in a temporary data dir, or PostgreSQL on a server the benchmark starts). Calls are placed
//   into an in-process fake callee that answers and hangs up `--hold-ms` later (no SIP: 10,000 real
//   calls cannot run here), so what is measured is the scheduler and the store, not the media. The
//   hold defaults to what fills 90 % of the cap at the pace asked (1,800 ms: ~175 live, 200 at most), so
//   the pace, not the cap, bounds the dial rate; at the cap's edge a freed place waits for the next
//   wake (~0.2 s) and the rate falls short of the pace by that share.
//   Figures: dial_rate_per_min against pace_per_min (steady state, first to last dial),
//   rate_error_pct; live_max (the concurrency reached, never above the cap), live_mean the calls
//   live on average. CPU, each a share of one core over the run: loop_cpu_pct is the event loop's
//   thread (every scheduler's work, the store clients' side of each query, the fake callee's 20 ms
//   beat); harness_cpu_pct what that beat alone costs it (measured in the baseline: first, for
//   `--baseline-seconds`, as long as the run by default, the stores open and no campaign running);
//   scheduler_cpu_pct the difference: what campaigns cost the loop that carries calls, the target's
//   figure (all `--bridges` schedulers together). store_thread_cpu_pct is the SQLite store threads
//   (in the bridge's process, off its loop; 0 on PostgreSQL), db_server_cpu_pct the PostgreSQL
//   server's processes (another program, shared by the bridges), process_cpu_pct the whole process
//   (GC and libuv threads too). loop_wakeups_per_s: on a VM each wake-up of an idle loop costs
//   ~0.1 ms, the work it wakes for less. cpu_us_per_dial is scheduler_cpu per call placed.
//   loop_lag_ms_max, the event loop's longest delay, against baseline_loop_lag_ms_max, the same in
//   the baseline (the target: no worse with a campaign); duplicate_dials, a row dialled twice for
//   the same attempt (must be 0). Stops after every row is dialled or `--seconds`. Prints one JSON line.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { type Campaign, campaignSettingsSchema } from "../src/campaigns/campaign.ts";
import { CampaignScheduler } from "../src/campaigns/scheduler.ts";
import type { SqlEngine } from "../src/campaigns/sql.ts";
import { CampaignStore } from "../src/campaigns/store.ts";
import { PostgresCampaignEngine } from "../src/campaigns/store-postgres.ts";
import { SqliteCampaignEngine } from "../src/campaigns/store-sqlite.ts";
import { systemClock } from "../src/core/clock.ts";
import { silentLogger } from "../src/core/log.ts";
import { numberArg, stringArg } from "./lib/args.ts";
import { mainThreadWakeups, processRunUs } from "./lib/calls-procs.ts";
import { round } from "./lib/measure.ts";
import { Postgres } from "./lib/postgres-server.ts";

const ROWS = numberArg("rows", 10_000);
const CONCURRENCY = numberArg("concurrency", 200);
const PACE = numberArg("pace", 6000);
const HOLD_MS = numberArg("hold-ms", Math.round((0.9 * CONCURRENCY * 60_000) / PACE));
const BRIDGES = numberArg("bridges", 2);
const SECONDS = numberArg("seconds", 60);
const BASELINE_S = Math.max(3, numberArg("baseline-seconds", SECONDS));
const STORE = stringArg("store") ?? "sqlite";
if (STORE !== "sqlite" && STORE !== "postgres") throw new Error("--store: expected sqlite or postgres");

const dir = mkdtempSync(join(tmpdir(), "bench-campaign-"));
let pgServer: Postgres | undefined;
let url = "";
if (STORE === "postgres") {
  pgServer = await Postgres.start();
  url = await pgServer.database("campaigns");
}
const engines: SqlEngine[] = [];
for (let b = 0; b < BRIDGES; b++)
  engines.push(
    STORE === "postgres"
      ? await PostgresCampaignEngine.open(url)
      : await SqliteCampaignEngine.open(join(dir, "voice-bridge.db")),
  );
const stores = engines.map((e) => new CampaignStore(e));

/** CPU of the SQLite store threads so far, µs. */
const storeThreadsUs = async () => {
  let us = 0;
  for (const e of engines) if (e instanceof SqliteCampaignEngine) us += await e.cpuUs();
  return us;
};
/** Run time of the PostgreSQL server's processes (the postmaster and its backends), µs. */
const dbServerUs = () => {
  if (!pgServer) return 0;
  const master = Number(readFileSync(join(pgServer.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  let us = processRunUs(master);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === master)
        us += processRunUs(Number(entry));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return us;
};
// Created paused and resumed as the schedulers start: its pace starts from one call then, not
// with what the bucket would have gathered while the list was written and the loop calibrated.
const campaign: Campaign = {
  id: "cmp-bench",
  name: "bench",
  status: "paused",
  settings: campaignSettingsSchema.parse({
    callingHours: { days: "mon-sun", from: "00:00", to: "24:00" },
    concurrency: CONCURRENCY,
    pacePerMinute: PACE,
  }),
  createdAt: new Date().toISOString(),
};
await stores[0]!.create(
  campaign,
  Array.from({ length: ROWS }, (_, i) => ({
    number: `+1555${String(i).padStart(7, "0")}`,
    variables: { i: String(i) },
    line: i + 2,
  })),
  Date.now(),
);

const dials = new Map<string, number>();
const dialTimes: number[] = [];
let live = 0;
let liveMax = 0;
let liveSum = 0;
let liveSamples = 0;
let duplicates = 0;
let n = 0;
/** Calls to end, in the order they end (every call is held as long). */
const ending: { at: number; end: () => void }[] = [];
let endingHead = 0;
const schedulers = stores.map((store, b) => {
  const scheduler: CampaignScheduler = new CampaignScheduler({
    store,
    instance: `bench-${b}`,
    clock: systemClock,
    now: () => Date.now(),
    leaseMs: 30_000,
    place: (body) => {
      const key = body.to;
      const seen = (dials.get(key) ?? 0) + 1;
      dials.set(key, seen);
      if (seen > 1) duplicates++;
      dialTimes.push(performance.now());
      const callId = `out-${b}-${++n}`;
      live++;
      liveMax = Math.max(liveMax, live);
      ending.push({
        at: performance.now() + HOLD_MS,
        end: () => {
          live--;
          scheduler.callEnded(callId, "answered", "the fake callee hung up");
        },
      });
      return { ok: true, callId };
    },
    cancelCall: () => {},
    headroom: () => CONCURRENCY,
    log: silentLogger,
  });
  return scheduler;
});

// The fake callee's clock: calls end on a 20 ms beat, as a bridge carrying calls is awake every
// frame anyway (a timer per call would wake an idle process 100 times a second and bill the
// scheduler for it); the live count is sampled on it too.
let beats = 0;
let onBeat: (() => void) | undefined;
const beat = setInterval(() => {
  const t = performance.now();
  while (endingHead < ending.length && ending[endingHead]!.at <= t) ending[endingHead++]!.end();
  if (endingHead > 10_000) {
    ending.splice(0, endingHead);
    endingHead = 0;
  }
  if (++beats % 5 === 0) {
    liveSum += live;
    liveSamples++;
  }
  onBeat?.();
}, 20);
const until = (done: () => boolean) =>
  new Promise<void>((resolve) => {
    onBeat = () => {
      if (done()) resolve();
    };
  });

// The baseline: the loop with the fake callee's clock alone, the stores open, no campaign. Its CPU
// is subtracted from the run's; its longest delay is what the run's is compared with.
const baselineLag = monitorEventLoopDelay({ resolution: 10 });
baselineLag.enable();
const idle0 = process.threadCpuUsage();
const calibrated = performance.now();
await until(() => performance.now() - calibrated >= BASELINE_S * 1000);
const idle = process.threadCpuUsage(idle0);
const harnessUsPerMs = (idle.user + idle.system) / (performance.now() - calibrated);
baselineLag.disable();

const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const cpu0 = process.cpuUsage();
const loop0 = process.threadCpuUsage();
const wakes0 = mainThreadWakeups(process.pid);
const store0 = await storeThreadsUs();
const db0 = dbServerUs();
const t0 = performance.now();
liveSum = 0;
liveSamples = 0;
await stores[0]!.setStatus(campaign.id, "running", Date.now());
for (const s of schedulers) await s.start();
const deadline = t0 + SECONDS * 1000;
await until(() => dials.size >= ROWS || performance.now() >= deadline);
const elapsed = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const loop = process.threadCpuUsage(loop0);
const wakes = mainThreadWakeups(process.pid) - wakes0;
const storeUs = (await storeThreadsUs()) - store0;
const dbUs = dbServerUs() - db0;
lag.disable();
for (const s of schedulers) await s.stop();
// Calls still live end on the beat; their outcomes are filed before the stores close.
await until(() => endingHead >= ending.length);
clearInterval(beat);
for (const s of schedulers) await s.settled();
for (const s of stores) await s.close();
await pgServer?.close();
rmSync(dir, { recursive: true, force: true });

const span = (dialTimes.at(-1)! - dialTimes[0]!) / 60_000;
const pctOfCore = (us: number) => round((us / 1000 / elapsed) * 100, 2);
const loopUs = loop.user + loop.system;
const harnessUs = harnessUsPerMs * elapsed;
const schedulerUs = Math.max(0, loopUs - harnessUs);
const rate = span > 0 ? (dialTimes.length - 1) / span : 0;
console.log(
  JSON.stringify({
    bench: "campaign",
    store: STORE,
    bridges: BRIDGES,
    rows: ROWS,
    dialled: dials.size,
    concurrency: CONCURRENCY,
    pace_per_min: PACE,
    dial_rate_per_min: round(rate),
    rate_error_pct: round(((rate - PACE) / PACE) * 100, 2),
    live_max: liveMax,
    live_mean: round(liveSum / Math.max(1, liveSamples)),
    scheduler_cpu_pct: pctOfCore(schedulerUs),
    loop_cpu_pct: pctOfCore(loopUs),
    harness_cpu_pct: pctOfCore(harnessUs),
    store_thread_cpu_pct: pctOfCore(storeUs),
    db_server_cpu_pct: pctOfCore(dbUs),
    process_cpu_pct: pctOfCore(cpu.user + cpu.system),
    loop_wakeups_per_s: round(wakes / (elapsed / 1000)),
    cpu_us_per_dial: round(schedulerUs / Math.max(1, dialTimes.length)),
    loop_lag_ms_max: round(lag.max / 1e6, 1),
    baseline_loop_lag_ms_max: round(baselineLag.max / 1e6, 1),
    baseline_seconds: BASELINE_S,
    duplicate_dials: duplicates,
    seconds: round(elapsed / 1000, 1),
    placer: `in-process fake callee (answers, hangs up after ${HOLD_MS} ms, on a 20 ms beat)`,
  }),
);
