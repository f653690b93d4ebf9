// npm run bench -- store [--engine sqlite|postgres|both] [--calls 100000] [--live 100]
//   The call store over many stored calls, for each engine: GET /calls pages (list_ms_p50: newest
//   first, filtered by number, transport, time, and the next page by cursor) and full-text searches
//   (search_ms_p50), each timed from the bridge's event loop; loop_stall_ms_max, the longest
//   event-loop delay while those run beside `--live` simulated calls (a 20 ms audio frame timer
//   each, and their turns appended to the store); turn_writes_per_s, turn events appended through
//   the store and written (flushed). loop_stall_ms_max_calls_only is the same calls alone for as
//   long: on a busy machine, the part of the stall the machine itself causes. PostgreSQL runs on a server the benchmark starts (Debian's
//   postgresql, as the tests do) unless DATABASE_URL names one. Prints one JSON line.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { mulawEncode } from "../codecs/g711.ts";
import { silentLogger } from "../src/core/log.ts";
import type { CallEvent } from "../src/records/call-record.ts";
import type { CallQuery, CallStore } from "../src/records/store/call-store.ts";
import { PostgresCallStore } from "../src/records/store/postgres/store.ts";
import { SqliteCallStore } from "../src/records/store/sqlite/store.ts";
import { numberArg, stringArg } from "./lib/args.ts";
import { machineBusyUs } from "./lib/calls-procs.ts";
import { percentile, round } from "./lib/measure.ts";
import { Postgres } from "./lib/postgres-server.ts";
import { searchTerms } from "./lib/store-seed.ts";

const CALLS = numberArg("calls", 100_000);
const LIVE = numberArg("live", 100);
const ENGINE = stringArg("engine") ?? "both";
if (!["sqlite", "postgres", "both"].includes(ENGINE))
  throw new Error("--engine: expected sqlite, postgres or both");
const REPEAT = 30;
const TURN_WRITES = 20_000;

interface Figures {
  list_ms_p50: number;
  list_ms_p99: number;
  search_ms_p50: number;
  search_ms_p99: number;
  loop_stall_ms_max: number;
  /** The same simulated calls for as long, with no list or search: what the machine itself costs. */
  loop_stall_ms_max_calls_only: number;
  /** This process's CPU (every thread) while listing and searching, % of one core: low with a long stall means the machine kept it waiting. */
  cpu_pct_while_measuring: number;
  turn_writes_per_s: number;
  seed_s: number;
}

/** The lists a console and a program make: newest first, by number, transport, a day, the next page. */
async function listQueries(store: CallStore): Promise<CallQuery[]> {
  const first = await store.list({ limit: 20 });
  return [
    { limit: 20 },
    { limit: 20, after: first.next! },
    { limit: 20, from: "+15550001234" },
    { limit: 20, transport: "sip" },
    { limit: 20, since: "2026-02-01T00:00:00.000Z", until: "2026-02-02T00:00:00.000Z" },
    { limit: 20, outcome: "ended", transport: "browser" },
  ];
}

async function timed(store: CallStore, queries: CallQuery[]): Promise<number[]> {
  const ms: number[] = [];
  for (let r = 0; r < REPEAT; r++)
    for (const q of queries) {
      const t = performance.now();
      await store.list(q);
      ms.push(performance.now() - t);
    }
  return ms;
}

/** `LIVE` calls: a 20 ms frame each (encoded, as a transport does) and a turn appended every 3 s. */
function simulateCalls(store: CallStore): () => void {
  const pcm = new Int16Array(160).fill(1200);
  const out = new Uint8Array(160);
  const timers: NodeJS.Timeout[] = [];
  const at = () => new Date().toISOString();
  for (let i = 0; i < LIVE; i++) {
    const callId = `live-${i}`;
    store.append(callId, { type: "call-start", at: at(), callId, transport: "twilio", from: "+15550000000" });
    let frames = 0;
    timers.push(
      setInterval(() => {
        mulawEncode(pcm, out);
        if (++frames % 150 === i % 150) store.append(callId, turnEvent(frames));
      }, 20),
    );
  }
  return () => {
    for (const t of timers) clearInterval(t);
    for (let i = 0; i < LIVE; i++)
      store.append(`live-${i}`, {
        type: "call-end",
        at: at(),
        reason: "caller hung up",
        outcome: "caller_hangup",
        durationMs: 1,
      });
  };
}

function turnEvent(n: number): CallEvent {
  return n % 2
    ? { type: "user", at: new Date().toISOString(), text: `where is my order number ${n}`, source: "speech" }
    : {
        type: "assistant",
        at: new Date().toISOString(),
        generated: `your order ${n} ships on monday`,
        heard: `your order ${n} ships on monday`,
        interrupted: false,
        toolCalls: [],
        metrics: { voiceToVoiceMs: 640, asrMs: 120, llmTtftMs: 200, ttsFirstAudioMs: 90, eouDelayMs: 230 },
      };
}

async function turnWritesPerS(store: CallStore): Promise<number> {
  const calls = 100;
  const start = performance.now();
  for (let c = 0; c < calls; c++)
    store.append(`w-${c}`, {
      type: "call-start",
      at: new Date().toISOString(),
      callId: `w-${c}`,
      transport: "sip",
    });
  for (let i = 0; i < TURN_WRITES; i++) store.append(`w-${i % calls}`, turnEvent(i));
  await store.flush();
  return TURN_WRITES / ((performance.now() - start) / 1000);
}

async function measure(store: CallStore, seedS: number): Promise<Figures> {
  const lists = await listQueries(store);
  const searches = searchTerms().map((q): CallQuery => ({ limit: 20, q }));
  await timed(store, [...lists, ...searches].slice(0, 4)); // warm the caches
  const stop = simulateCalls(store);
  await new Promise((r) => setTimeout(r, 500));
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t = performance.now();
  const cpu = process.cpuUsage();
  const listMs = await timed(store, lists);
  const searchMs = await timed(store, searches);
  delay.disable();
  const used = process.cpuUsage(cpu);
  const cpuPct = ((used.user + used.system) / 1000 / (performance.now() - t)) * 100;
  const baseline = monitorEventLoopDelay({ resolution: 1 });
  baseline.enable();
  await new Promise((r) => setTimeout(r, performance.now() - t));
  baseline.disable();
  stop();
  await store.flush();
  const writes = await turnWritesPerS(store);
  return {
    list_ms_p50: round(percentile(listMs, 50), 2),
    list_ms_p99: round(percentile(listMs, 99), 2),
    search_ms_p50: round(percentile(searchMs, 50), 2),
    search_ms_p99: round(percentile(searchMs, 99), 2),
    loop_stall_ms_max: round(delay.max / 1e6, 1),
    loop_stall_ms_max_calls_only: round(baseline.max / 1e6, 1),
    cpu_pct_while_measuring: round(cpuPct),
    turn_writes_per_s: Math.round(writes),
    seed_s: round(seedS, 1),
  };
}

/** Seeds in a worker thread: the set-up's garbage stays out of the measured heap. */
function seed(engine: "sqlite" | "postgres", target: string): Promise<void> {
  const worker = new Worker(new URL("./lib/store-seed-worker.ts", import.meta.url), {
    workerData: { engine, target, calls: CALLS },
  });
  return new Promise((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
    worker.once("exit", (code) => (code ? reject(new Error(`seeding exited with ${code}`)) : resolve()));
  });
}

async function sqlite(dir: string): Promise<Figures> {
  const path = join(dir, "voice-bridge.db");
  const open = () =>
    SqliteCallStore.open({ path, instance: "bench", onWriteError: (err) => console.error(err) });
  await (await open()).close(); // the schema
  const t = performance.now();
  await seed("sqlite", path);
  const seedS = (performance.now() - t) / 1000;
  const store = await open();
  try {
    return await measure(store, seedS);
  } finally {
    await store.close();
  }
}

async function postgres(): Promise<Figures> {
  const server = process.env.DATABASE_URL ? undefined : await Postgres.start();
  try {
    const url = process.env.DATABASE_URL ?? (await server!.database("bench"));
    const store = await PostgresCallStore.open({ url, instance: "bench", log: silentLogger });
    try {
      const t = performance.now();
      await seed("postgres", url);
      return await measure(store, (performance.now() - t) / 1000);
    } finally {
      await store.close();
    }
  } finally {
    await server?.close();
  }
}

const dir = mkdtempSync(join(tmpdir(), "bench-store-"));
const busy0 = machineBusyUs();
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result: Record<string, unknown> = { bench: "store", calls: CALLS, live_calls: LIVE };
try {
  if (ENGINE !== "postgres") result.sqlite = await sqlite(dir);
  if (ENGINE !== "sqlite") result.postgres = await postgres();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const wallS = (performance.now() - t0) / 1000;
const own = process.cpuUsage(cpu0);
// Cores busy with everything but this process (the PostgreSQL server included) over the run.
result.other_cpu_cores = round((machineBusyUs() - busy0 - own.user - own.system) / 1e6 / wallS, 2);
result.cpu_cores = cpus().length;
console.log(JSON.stringify(result));
