// `npm run bench -- turns [--concurrency N] [--only CATEGORY] [--hotwords] [--set agent.KEY=VALUE]…
// [--verbose]`: turn-taking quality of
// the real bridge on a labelled set of caller recordings (espeak-ng speech and synthetic coughs,
// some under seeded background noise), each placed as a Twilio call by the simulator against an
// in-process bridge with the embedded local service. Prints one JSON line:
//   eou_delay_ms_p50        end of caller speech → turn confirmed (the bridge's eouDelayMs), complete utterances
//   premature_cutoff_rate   utterances with a 200–700 ms mid-sentence pause that the bridge cut in two
//                           (two user turns) or answered inside the pause (agent heard before the end)
//   barge_in_ms_p50         caller speech start over the agent → `clear` received, real interruptions
//   false_barge_in_rate     backchannels and coughs over the agent that interrupted it for good
//   missed_barge_in_rate    real interruptions that did not interrupt the agent
// plus counts per category and the figures behind each rate. The bridge runs with its default
// configuration unless --hotwords (bias recognition to the demo hotline's menu words) or --set
// (any config key, to try a turn-taking setting) say otherwise. --verbose prints each case to stderr.
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { seededRandom } from "../test/helpers/noise.ts";
import { stringArg } from "./lib/args.ts";
import { round } from "./lib/measure.ts";
import { buildCases, type Category } from "./lib/turns-cases.ts";
import type { Outcome } from "./lib/turns-judge.ts";
import { HOTLINE_HOTWORDS, runCases, startBenchBridge } from "./lib/turns-run.ts";
import { summarize } from "./lib/turns-summary.ts";

const arg = stringArg;
const concurrency = Number(arg("concurrency") ?? 5);
const only = arg("only") as Category | undefined;
const verbose = process.argv.includes("--verbose");
const hotwords = process.argv.includes("--hotwords");
const overrides: Record<string, Record<string, unknown>> = {};
for (let i = 0; i < process.argv.length; i++) {
  if (process.argv[i] !== "--set") continue;
  const m = /^(\w+)\.(\w+)=(.*)$/.exec(process.argv[i + 1] ?? "");
  if (!m) throw new Error(`--set wants section.key=value, got ${process.argv[i + 1]}`);
  const section = overrides[m[1]!] ?? {};
  section[m[2]!] = m[3]!;
  overrides[m[1]!] = section;
}

const t0 = performance.now();
// The machine may be shared: its load says how much the timings (ASR above all) were squeezed.
const loadBefore = loadavg()[0]!;
let cases = buildCases();
if (only) cases = cases.filter((c) => c.category === only);
// Interleave the categories (seeded), so every stretch of the run carries a similar load.
const rand = seededRandom(42);
const order = cases.map((c) => ({ c, k: rand() })).sort((a, b) => a.k - b.k);
cases = order.map((o) => o.c);
const buildS = (performance.now() - t0) / 1000;

const { bridge, close } = await startBenchBridge(
  hotwords ? { SVC_HOTWORDS: HOTLINE_HOTWORDS.join(",") } : {},
  overrides,
);
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const show = (o: Outcome) => {
  if (verbose) process.stderr.write(`${JSON.stringify(o)}\n`);
};
const outcomes = await runCases(bridge.url, cases, concurrency, show);
lag.disable();
await close();

console.log(
  JSON.stringify({
    bench: "turns",
    ...summarize(outcomes),
    config: { hotwords, overrides },
    concurrency,
    load_avg_1m: [round(loadBefore, 2), round(loadavg()[0]!, 2)],
    event_loop_lag_ms_p99: round(lag.percentile(99) / 1e6, 1),
    audio_build_s: round(buildS, 1),
    run_s: round((performance.now() - t0) / 1000 - buildS, 1),
  }),
);
