// `npm run bench -- turns [--cases both|project|flite] [--noise KIND:DB,… [--gain DB] [--draw N]] [--concurrency N]
// [--only CATEGORY] [--hotwords] [--latency PROFILE] [--faults SPEC] [--hello MS] [--pop MS] [--softer DB] [--set agent.KEY=VALUE]…
// [--trace FILE] [--verbose]`: turn-taking quality of the
// real bridge on two labelled sets of caller recordings, each case placed as a Twilio call by the
// simulator against an in-process bridge with the embedded local service:
//   project  espeak-ng voices and synthetic coughs, some under seeded background noise: the set
//            turn-taking settings are tuned on (bench/lib/turns-cases.ts)
//   flite    HELD OUT: Debian's flite voices (another synthesizer) saying phrases with pauses that
//            were written before anything was tuned and were never tuned on (turns-flite*.ts)
//   noisy    with --noise (instead of the two above): callers of its own with the room behind
//            them, e.g. `--noise babble:16,hiss:24` (backgrounds and dB below the caller's speech:
//            bench/lib/turns-backgrounds.ts, turns-noisy*.ts; a KIND that is a file's path, as in
//            `--noise ./shop.wav:16`, lays that recording under them); --gain -15 plays every
//            call 15 dB quieter on the line, caller and room alike; --draw N (not 0) draws the set anew:
//            other offsets, gains, coughs and stretches of the room, one it was not tuned on;
//            with --cases flite, the held-out flite set's callers under that room instead
// --hello MS: every caller first says "Hello?" MS into the call, as the call connects (turns-hello.ts)
// --pop MS: every call's line pops MS into the call, as a line can click as it is answered (turns-pop.ts)
// --softer DB (with --noise): callers speak over the agent's reply DB softer than they asked (turns-softer.ts)
// Prints one JSON line: the project set's figures at the top level, the held-out set's under
// "flite", each with
//   eou_delay_ms_p50        end of caller speech → turn confirmed (the bridge's eouDelayMs), complete utterances
//   premature_cutoff_rate   utterances with a mid-sentence pause that the bridge cut in two
//                           (two user turns) or answered inside the pause (agent heard before the end)
//   talk_over_rate          pause cases with any agent audio heard before the caller finished
//   talk_over_ms_max        the most agent audio heard over one of them, ms
//   barge_in_ms_p50         caller speech start over the agent → `clear` received, real interruptions
//   false_barge_in_rate     backchannels and coughs over the agent that interrupted it for good
//   missed_barge_in_rate    real interruptions that did not interrupt the agent
//   greeting_stopped_rate   calls whose caller made no sound over the greeting (every case not over
//                           it) with an interruption recorded before their first sound: the room's
//                           voice, taken for theirs, stopped the greeting (ids: greeting_stopped)
//   answered_rate           complete utterances (questions) that got a user turn and a reply heard
//                           after them, the apology, or the words that ask again: never silence
//   apology_rate            of those questions, the ones that got the apology (the service failed)
//   asked_again_rate        ...and the ones asked to say it again (no words made out in their voice)
//   repeated_words          words the caller heard twice within one reply, judged from the
//                           recording: each sentence the call's speech sessions delivered is found
//                           in it sample for sample, and two playings of one sentence's text that
//                           cover the same part of it, with no caller sound between, were heard
//                           twice; repeats of 2 words or more (bench/lib/turns-repeats.ts);
//                           repeated_audio_ms every repeat, a one-word stutter included
//   hedged_requests_per_turn  hedged E1 requests (the replies' hedgedRequests in the record) ÷ the
//                           caller turns recorded
//   faults_injected         the faults the local service played over the set, per kind (--faults)
// plus counts per category and the figures behind each rate, and the service-time figures
// (bench/lib/service-time.ts: v2v_ms_p50/p90, service_floor_ms, bridge_added_ms_p50,
// chat_requests_per_turn, unanswered_turns) under the `latency` the local service played
// (--latency hosted: the hosted service's median timing; default none), and failing as --faults says
// (SVC_LOCAL_FAULTS, e.g. chat503=0.3,asr503=0.2,ttsCut=0.2,chatStall=0.1; default none). The bridge runs with its default
// configuration unless --hotwords (bias recognition to the demo hotline's menu words) or --set
// (any config key, to try a turn-taking setting) say otherwise. --verbose prints each case to
// stderr; --trace writes the bridge's debug log (each utterance end's evidence and wait) for
// bench/lib/turns-fit.ts.
import { loadavg } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pino } from "pino";
import { seededRandom } from "../test/helpers/noise.ts";
import { stringArg } from "./lib/args.ts";
import { faultCounter, faultsArg } from "./lib/faults-arg.ts";
import { latencyArg } from "./lib/latency-arg.ts";
import { round } from "./lib/measure.ts";
import { chatRequestCounter, serviceTimeFigures } from "./lib/service-time.ts";
import { allowanceFor, withAllowance } from "./lib/turns-allowance.ts";
import { hedgedPerTurn, setFacts } from "./lib/turns-answers.ts";
import { parseNoise } from "./lib/turns-backgrounds.ts";
import { buildCases, type Category, espeakSynth, type Synth, type TurnCase } from "./lib/turns-cases.ts";
import { buildFliteCases, fliteSynth } from "./lib/turns-flite.ts";
import { parseHello, withHello } from "./lib/turns-hello.ts";
import type { Outcome } from "./lib/turns-judge.ts";
import { buildFliteNoisyCases, buildNoisyCases } from "./lib/turns-noisy.ts";
import { parsePop, withPop } from "./lib/turns-pop.ts";
import { HOTLINE_HOTWORDS, runCases, startBenchBridge } from "./lib/turns-run.ts";
import { parseSofter } from "./lib/turns-softer.ts";
import { summarize } from "./lib/turns-summary.ts";
import { TtsTap } from "./lib/turns-tts-tap.ts";

const arg = stringArg;
const concurrency = Number(arg("concurrency") ?? 5);
const only = arg("only") as Category | undefined;
const which = arg("cases") ?? "both";
if (!["both", "project", "flite"].includes(which))
  throw new Error(`--cases wants both, project or flite, got ${which}`);
const noise = arg("noise");
const layers = noise === undefined ? undefined : await parseNoise(noise);
const gainDb = Number(arg("gain") ?? 0);
if (!Number.isFinite(gainDb)) throw new Error(`--gain wants dB (e.g. -15), got ${arg("gain")}`);
if (gainDb !== 0 && !layers)
  throw new Error("--gain plays the noisy set's calls quieter or louder: give --noise too");
const draw = Number(arg("draw") ?? 0);
if (!Number.isInteger(draw))
  throw new Error(`--draw wants a whole number (0: the quoted set), got ${arg("draw")}`);
if (draw !== 0 && !layers) throw new Error("--draw draws the noisy set anew: give --noise too");
/** The held-out flite callers under the room (--noise with --cases flite), not the noisy set's. */
const fliteUnderRoom = layers !== undefined && which === "flite";
if (fliteUnderRoom && draw !== 0)
  throw new Error("--draw draws the noisy set anew; the flite set has one draw");
const helloMs = parseHello(arg("hello"));
const popMs = parsePop(arg("pop"));
const softerDb = parseSofter(arg("softer"));
if (softerDb !== undefined && !layers)
  throw new Error("--softer plays the noisy set's callers softer: give --noise too");
const verbose = process.argv.includes("--verbose");
const hotwords = process.argv.includes("--hotwords");
const latency = latencyArg();
const faults = faultsArg();
// Room in the cases' timelines for the service's time and its recoveries (none without --latency
// or --faults).
const allowance = allowanceFor(latency.profile, faults.profile);
const overrides: Record<string, Record<string, unknown>> = {};
for (let i = 0; i < process.argv.length; i++) {
  if (process.argv[i] !== "--set") continue;
  const m = /^(\w+)\.(\w+)=(.*)$/.exec(process.argv[i + 1] ?? "");
  if (!m) throw new Error(`--set wants section.key=value, got ${process.argv[i + 1]}`);
  const section = overrides[m[1]!] ?? {};
  section[m[2]!] = m[3]!;
  overrides[m[1]!] = section;
}

/** The set's cases (of one category with --only), interleaved by category (seeded), so every
 * stretch of the run carries a similar load. */
function prepare(cases: TurnCase[], synth: Synth): TurnCase[] {
  const chosen = only ? cases.filter((c) => c.category === only) : cases;
  const rand = seededRandom(42);
  return chosen
    .map((c) => ({ c, k: rand() }))
    .sort((a, b) => a.k - b.k)
    .map((o) => withAllowance(o.c, allowance))
    .map((c) => (helloMs === undefined ? c : withHello(c, helloMs, synth)))
    .map((c) => (popMs === undefined ? c : withPop(c, popMs)));
}

const t0 = performance.now();
// The machine may be shared: its load says how much the timings (ASR above all) were squeezed.
const loadBefore = loadavg()[0]!;
const noisy = !layers
  ? []
  : fliteUnderRoom
    ? prepare(buildFliteNoisyCases(layers, gainDb, softerDb), fliteSynth)
    : prepare(buildNoisyCases(layers, gainDb, draw, softerDb), espeakSynth);
const project = layers || which === "flite" ? [] : prepare(buildCases(), espeakSynth);
const flite = layers || which === "project" ? [] : prepare(buildFliteCases(), fliteSynth);
const buildS = (performance.now() - t0) / 1000;

const tracePath = arg("trace");
// The sentences each call's speech sessions delivered, for repeated_words (turns-repeats.ts).
const tap = new TtsTap();
const { bridge, close } = await startBenchBridge(
  { ...(hotwords ? { SVC_HOTWORDS: HOTLINE_HOTWORDS.join(",") } : {}), ...latency.env, ...faults.env },
  overrides,
  tracePath ? pino({ level: "debug" }, pino.destination({ dest: tracePath, sync: false })) : undefined,
  { wrapServices: tap.wrap },
);
const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const show = (set: string) => (o: Outcome) => {
  if (verbose) process.stderr.write(`${JSON.stringify({ set, ...o })}\n`);
};
// E1 requests and the faults played, counted at the service, per set (service-time.ts).
const chatSince = chatRequestCounter(bridge.localService);
const faultsSince = faultCounter(bridge.localService);
/** A set's figures beyond turn-taking: the service's time, how the bridge answered, the faults. */
const answering = (outcomes: Outcome[]) => {
  tap.clear();
  return {
    ...serviceTimeFigures(setFacts(outcomes, chatSince())),
    hedged_requests_per_turn: hedgedPerTurn(outcomes),
    faults_injected: faultsSince(),
  };
};
const run = (cases: TurnCase[], set: string) =>
  runCases(bridge, cases, concurrency, show(set), () => tap.sentences);
const noisyOutcomes = await run(noisy, "noisy");
const noisyTime = answering(noisyOutcomes);
const projectOutcomes = await run(project, "project");
const projectTime = answering(projectOutcomes);
const fliteOutcomes = await run(flite, "flite");
const fliteTime = answering(fliteOutcomes);
lag.disable();
await close();

console.log(
  JSON.stringify({
    bench: "turns",
    latency: latency.description,
    faults: faults.description,
    ...(helloMs !== undefined ? { hello_ms: helloMs } : {}),
    ...(popMs !== undefined ? { pop_ms: popMs } : {}),
    ...(softerDb !== undefined ? { softer_db: softerDb } : {}),
    ...(noisy.length
      ? {
          noise,
          ...(gainDb ? { gain_db: gainDb } : {}),
          ...(draw ? { draw } : {}),
          ...summarize(noisyOutcomes),
          ...noisyTime,
        }
      : {}),
    ...(project.length ? { ...summarize(projectOutcomes), ...projectTime } : {}),
    ...(flite.length ? { flite: { ...summarize(fliteOutcomes), ...fliteTime } } : {}),
    sets: {
      ...(noisy.length
        ? {
            noisy: fliteUnderRoom
              ? `the flite set's callers (HELD OUT, never tuned on), ${noisy.length} cases, under ${noise}`
              : `espeak-ng callers of its own, ${noisy.length} cases, under ${noise}`,
          }
        : {}),
      project: `espeak-ng, ${project.length} cases: turn-taking settings are tuned on it`,
      flite: `flite, ${flite.length} cases: HELD OUT, phrases and pauses written before tuning and never tuned on`,
    },
    config: { hotwords, overrides },
    concurrency,
    load_avg_1m: [round(loadBefore, 2), round(loadavg()[0]!, 2)],
    event_loop_lag_ms_p99: round(lag.percentile(99) / 1e6, 1),
    audio_build_s: round(buildS, 1),
    run_s: round((performance.now() - t0) / 1000 - buildS, 1),
  }),
);
