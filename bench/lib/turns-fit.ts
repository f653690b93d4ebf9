// How the end-of-turn weights were fitted, and the offline trade-off curve. Reads a turns bench
// run made with `--verbose --trace TRACE 2> VERBOSE` and labels each utterance end the bridge
// logged ("end-of-turn decision": its words, prosody, when it was decided) against the case's
// timeline: the end of a sentence, or a pause the caller went on after (and after how long,
// from the next speech start). Then:
//   fit     logistic regression of "this silence ends the turn" on the evidence, on the PROJECT
//           set only (the flite set is held out), with leave-one-case-out log loss per feature
//           set, also with the LM asked about the true words instead of the recognized ones;
//   curve   every utterance end replayed under other settings, for both sets: the pause cases
//           the agent would have talked over (a wait shorter than the pause, within 20 ms) and
//           the median end-of-turn delay of complete utterances (the wait, or when the words came).
// Usage: node bench/lib/turns-fit.ts TRACE VERBOSE [fit|curve]
import { readFileSync } from "node:fs";
import { DEFAULT_SESSION_CONFIG, type TurnTakingConfig } from "../../src/session/config.ts";
import { completionLogOdds, turnEndWaitMs } from "../../src/session/end-of-turn.ts";
import { POPULATION_PAUSE_MU, POPULATION_PAUSE_SIGMA } from "../../src/session/pause-profile.ts";
import type { EndProsody } from "../../src/session/prosody.ts";
import { TrigramLm } from "../../src/session/trigram-lm.ts";
import { TrigramTurnCompletion } from "../../src/session/turn-completion.ts";
import { buildCases, type TurnCase } from "./turns-cases.ts";
import { buildFliteCases } from "./turns-flite.ts";

interface UtteranceEnd {
  caseId: string;
  category: string;
  /** A pause the caller went on after `pauseMs` later, or the end of a sentence. */
  kind: "final" | "pause";
  pauseMs?: number;
  text: string;
  trueText: string;
  prosody?: EndProsody;
  decidedAfterMs: number;
  lmEnd?: number;
  trueLmEnd?: number;
}

type Json = Record<string, unknown>;
const jsonLines = (path: string): Json[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json);

function utteranceEnds(trace: Json[], outcomes: Json[], set: string, cases: TurnCase[]): UtteranceEnd[] {
  const caseOf = new Map(cases.map((c) => [c.id, c]));
  const byCall = new Map(
    outcomes.filter((o) => o.set === set).map((o) => [o.callSid, caseOf.get(o.id as string)!]),
  );
  const starts = new Map<unknown, number[]>();
  for (const l of trace)
    if (l.msg === "speech-start") starts.set(l.callId, [...(starts.get(l.callId) ?? []), l.atMs as number]);
  const out: UtteranceEnd[] = [];
  for (const l of trace) {
    const c = byCall.get(l.callId);
    if (l.msg !== "end-of-turn decision" || !c) continue;
    const endMs = l.endMs as number;
    const ends = [c.endMs, ...(c.questionEndMs !== undefined ? [c.questionEndMs] : [])];
    const final = ends.some((e) => Math.abs(endMs - e) < 350);
    // The repeated question before over-the-reply cases would weigh one sentence a dozen times.
    if (final && Math.abs(endMs - c.endMs) >= 350) continue;
    const next = starts.get(l.callId)?.find((s) => s > endMs);
    // A pause nobody was heard going on after (the call ended in it) cannot be labelled.
    if (!final && next === undefined) continue;
    const [before, after] = c.text.split(" … ");
    out.push({
      caseId: c.id,
      category: c.category,
      kind: final ? "final" : "pause",
      ...(final ? {} : { pauseMs: next! - endMs }),
      text: l.text as string,
      trueText: final || after === undefined ? c.text.replace(" … ", " ") : before!,
      ...(l.prosody ? { prosody: l.prosody as EndProsody } : {}),
      decidedAfterMs: (l.decidedAfterMs as number | undefined) ?? 260,
    });
  }
  return out;
}

function fitLogistic(x: number[][], y: number[], lambda = 1): number[] {
  const d = x[0]!.length + 1;
  let w = new Array<number>(d).fill(0);
  for (let it = 0; it < 5000; it++) {
    const g = new Array<number>(d).fill(0);
    x.forEach((row, i) => {
      const z = w[0]! + row.reduce((s, v, j) => s + v * w[j + 1]!, 0);
      const r = 1 / (1 + Math.exp(-z)) - y[i]!;
      g[0]! += r;
      row.forEach((v, j) => {
        g[j + 1]! += r * v;
      });
    });
    for (let j = 1; j < d; j++) g[j]! += lambda * w[j]!;
    w = w.map((v, j) => v - 0.02 * g[j]!);
  }
  return w;
}

const lmx = (p: number | undefined) => (p === undefined ? 0 : Math.max(-3, Math.log10(p)) + 1);
const fall = (e: UtteranceEnd) => (e.prosody ? Math.max(0, -e.prosody.f0EndSt - 1) : 0);
const rise = (e: UtteranceEnd) => (e.prosody ? Math.max(0, e.prosody.f0SlopeStPerS / 10) : 0);
const FEATURES: Record<string, (e: UtteranceEnd) => number[]> = {
  "lm (recognized words)": (e) => [lmx(e.lmEnd)],
  "lm (true words)": (e) => [lmx(e.trueLmEnd)],
  "fall + rise": (e) => [fall(e), rise(e)],
  "fall + rise + level": (e) => [fall(e), rise(e), (e.prosody?.levelEndDb ?? -8) / 10],
  "fall only": (e) => [fall(e)],
  "lm (recognized) + fall + rise": (e) => [lmx(e.lmEnd), fall(e), rise(e)],
  "lm (true) + fall + rise": (e) => [lmx(e.trueLmEnd), fall(e), rise(e)],
};

function fitWeights(ends: UtteranceEnd[]): void {
  const y: number[] = ends.map((e) => (e.kind === "final" ? 1 : 0));
  const base = y.reduce((a, b) => a + b, 0) / y.length;
  const constant = -(base * Math.log(base) + (1 - base) * Math.log(1 - base));
  console.log(`project set: ${ends.length} utterance ends, ${y.filter((v) => v).length} turn ends`);
  console.log(`  constant model: log loss ${constant.toFixed(3)}`);
  for (const [name, f] of Object.entries(FEATURES)) {
    let loss = 0;
    for (const id of new Set(ends.map((e) => e.caseId))) {
      const train = ends.filter((e) => e.caseId !== id);
      const w = fitLogistic(
        train.map(f),
        train.map((e) => (e.kind === "final" ? 1 : 0)),
      );
      for (const e of ends.filter((e) => e.caseId === id)) {
        const p = 1 / (1 + Math.exp(-(w[0]! + f(e).reduce((s, v, j) => s + v * w[j + 1]!, 0))));
        loss -= Math.log(e.kind === "final" ? p : 1 - p);
      }
    }
    const w = fitLogistic(ends.map(f), y).map((v) => v.toFixed(2));
    console.log(
      `  ${name}: leave-one-case-out log loss ${(loss / ends.length).toFixed(3)}, weights ${w.join(" ")}`,
    );
  }
}

function curve(sets: Record<string, UtteranceEnd[]>, pauseCases: Record<string, number>): void {
  const pause = { mu: POPULATION_PAUSE_MU, sigma: POPULATION_PAUSE_SIGMA, shift: 0 };
  const configs: Record<string, Partial<TurnTakingConfig>> = {
    "silence only": { endOfTurnProsody: false, endOfTurnLmWeight: 0 },
    "lm 1.3": { endOfTurnProsody: false, endOfTurnLmWeight: 1.3 },
    prosody: { endOfTurnProsody: true, endOfTurnLmWeight: 0 },
    "prosody + lm 1.3": { endOfTurnProsody: true, endOfTurnLmWeight: 1.3 },
  };
  for (const [name, c] of Object.entries(configs)) {
    for (const confidence of [0.7, 0.8, 0.85, 0.9, 0.92, 0.94, 0.96, 0.98]) {
      const turn = { ...DEFAULT_SESSION_CONFIG.turn, ...c, endOfTurnConfidence: confidence };
      const wait = (e: UtteranceEnd) =>
        turnEndWaitMs(completionLogOdds({ lmEnd: e.lmEnd, prosody: e.prosody }, turn), pause, turn);
      const row = Object.entries(sets).map(([set, ends]) => {
        const over = new Set(
          ends
            .filter((e) => e.category === "pause" && e.kind === "pause" && wait(e) < e.pauseMs! + 20)
            .map((e) => e.caseId),
        );
        const eou = ends
          .filter((e) => e.kind === "final" && e.category === "complete")
          .map((e) => Math.max(wait(e), e.decidedAfterMs))
          .sort((a, b) => a - b);
        return `${set} talk-over ${over.size}/${pauseCases[set]} eou p50 ${eou[Math.ceil(eou.length / 2) - 1]}`;
      });
      console.log(`${name} @ ${confidence}: ${row.join(" | ")}`);
    }
  }
}

const [tracePath, verbosePath, what = "fit"] = process.argv.slice(2);
if (!tracePath || !verbosePath)
  throw new Error("usage: node bench/lib/turns-fit.ts TRACE VERBOSE [fit|curve]");
const trace = jsonLines(tracePath);
const outcomes = jsonLines(verbosePath);
const lm = new TrigramTurnCompletion(
  new TrigramLm(readFileSync("/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")),
);
const withLm = (ends: UtteranceEnd[]) =>
  ends.map((e) => ({ ...e, lmEnd: lm.endProbability(e.text), trueLmEnd: lm.endProbability(e.trueText) }));
const project = withLm(utteranceEnds(trace, outcomes, "project", buildCases()));
if (what === "fit") {
  // Turn ends of the interruptions are kept: they are varied sentences; backchannels and coughs have none.
  fitWeights(project);
} else {
  const flite = withLm(utteranceEnds(trace, outcomes, "flite", buildFliteCases()));
  curve({ project, flite }, { project: 14, flite: 36 });
}
