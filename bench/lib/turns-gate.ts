// The caller-level gate offline: each case of the noisy turn set, as the bridge hears it (μ-law at
// 8 kHz, resampled to 16 kHz), through the real voice detector and CallerVoice frame by frame,
// faster than real time and with no bridge, service or simulator. It shows where the gate takes
// the room for the caller or refuses the caller, in seconds instead of a 4-minute bench run.
//   node bench/lib/turns-gate.ts NOISE [CATEGORIES] [IDS] [--events] [--levels FROM-TO] [--gain DB] [--draw N] [--latency PROFILE] [--hello MS] [--pop MS] [--softer DB]
// e.g. `node bench/lib/turns-gate.ts music:10,hiss:24 complete complete-3 --levels 4400-5400`.
// Prints, per set, the labelled utterances no onset of the gate's fell in (`missed`: coughs apart,
// which it should refuse; `coughs`: those it took), and the onsets outside every utterance of the
// caller's (`spurious`: the room taken for them); in pause cases, how late after the caller resumed
// the gate heard them (`resume_late_ms`: a late resumption is a pause answered over; `resume_unheard`:
// never before their last word, the rest answered over); of the sounds
// over the agent, which the session's barge-in rule would take wrongly from the gate's events
// (`false_barge_in`: a backchannel or cough the voice alone takes for an interruption, before its
// words are recognized, interruptions.ts; `missed_barge_in`; over the greeting from the call's
// first frame), and the calls with no sound of the caller's over the greeting whose greeting the
// room stopped (`greeting_stopped`: a room's voice taken for the caller before they spoke), and the
// utterances whose speech the gate ended over 500 ms before their words did (`cut_short`); for
// questions, how long after their last word it ended (`end_late_ms`; `held_open`: over 400). With
// --events, each case's detector events (v start, ^ end) and the gate's (S start, E end, R
// restart) at their stream positions; with --levels, each frame's level and the gate's bars in
// that window, and the detector's speech probability for its last window. --gain plays the whole
// call louder or quieter on the line, caller and room alike (e.g. --gain=-15): the gate judges
// levels against each other, and the detector's energy gate follows the line down
// (vad-detector.ts), so a quieter call should be judged as the same call.
// --draw N plays the set drawn anew (turns-noisy.ts): one the gate was not tuned on. --set flite
// plays the held-out flite set under the room instead: other voices and phrases, a check only.
// --latency plays the timelines `npm run bench -- turns --latency` does (turns-allowance.ts): each
// sound later, so over another stretch of the room. --hello MS has every caller say "Hello?" MS
// into the call first, as the bench's --hello does (turns-hello.ts); --pop MS has every call's line
// pop MS into the call (turns-pop.ts); --softer DB has callers speak over the agent's reply DB softer
// than they asked (turns-softer.ts). The cases are one line's calls, in order: each teaches the line
// its caller's level (line-level.ts), as calls through one bridge do.
import { parseArgs } from "node:util";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { meanSquare, powerDb } from "../../codecs/level-tracker.ts";
import { Resampler } from "../../codecs/resample.ts";
import { loadSileroModel, VoiceActivityDetector } from "../../codecs/vad.ts";
import { parseLatency } from "../../src/config/latency.ts";
import { gapAfterEndMs, REJOIN_MS } from "../../src/session/barge-ins.ts";
import { CallerVoice } from "../../src/session/caller-voice.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { LineLevel } from "../../src/session/line-level.ts";
import { VAD_GATE_BELOW_LOUDEST_DB, VAD_NEAR_THRESHOLD } from "../../src/session/vad-detector.ts";
import { pauseHeardLonger } from "./gate-pause.ts";
import { percentile } from "./measure.ts";
import { allowanceFor, heardAsPlanned, withAllowance } from "./turns-allowance.ts";
import { parseNoise } from "./turns-backgrounds.ts";
import { espeakSynth, type TurnCase } from "./turns-cases.ts";
import { fliteSynth } from "./turns-flite.ts";
import { parseHello, withHello } from "./turns-hello.ts";
import { buildFliteNoisyCases, buildNoisyCases } from "./turns-noisy.ts";
import { parsePop, withPop } from "./turns-pop.ts";
import { parseSofter } from "./turns-softer.ts";
import { usageOfFile } from "./usage.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    events: { type: "boolean" },
    levels: { type: "string" },
    gain: { type: "string" },
    draw: { type: "string" },
    set: { type: "string" },
    latency: { type: "string" },
    hello: { type: "string" },
    pop: { type: "string" },
    softer: { type: "string" },
    help: { type: "boolean" },
  },
});
const [noise, categories = "complete,pause,backchannel,cough,interrupt", ids] = positionals;
// The opening comment is the usage: printed for --help, and when the room is missing.
if (values.help || !noise) {
  const usage = usageOfFile(import.meta.filename);
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  process.stderr.write(`turns-gate: which room? (NOISE, e.g. babble:16,hiss:24)\n\n${usage}\n`);
  process.exit(2);
}
const gainDb = Number(values.gain ?? 0);
if (!Number.isFinite(gainDb)) throw new Error(`--gain: ${values.gain} is not a number of dB`);
const draw = Number(values.draw ?? 0);
if (!Number.isInteger(draw)) throw new Error(`--draw: ${values.draw} is not a whole number`);
const [levelsFrom, levelsTo] = values.levels ? values.levels.split("-").map(Number) : [-1, -1];
if (values.set !== undefined && values.set !== "noisy" && values.set !== "flite")
  throw new Error(`--set: ${values.set} is neither noisy nor flite`);
const helloMs = parseHello(values.hello);
const popMs = parsePop(values.pop);
const softerDb = parseSofter(values.softer) ?? 0;
const built =
  values.set === "flite"
    ? buildFliteNoisyCases(await parseNoise(noise), gainDb, softerDb)
    : buildNoisyCases(await parseNoise(noise), gainDb, draw, softerDb);
// The timelines the bench plays under --latency: later sounds, over other stretches of the room.
const allowance = allowanceFor(parseLatency(values.latency ?? "none"));
const cases = built
  .filter((c) => categories.split(",").includes(c.category) && (!ids || ids.split(",").includes(c.id)))
  .map((c) => heardAsPlanned(withAllowance(c, allowance), allowance))
  .map((c) =>
    helloMs === undefined ? c : withHello(c, helloMs, values.set === "flite" ? fliteSynth : espeakSynth),
  )
  .map((c) => (popMs === undefined ? c : withPop(c, popMs)));
const model = await loadSileroModel();

const { bargeInConfirmMs, bargeInGapMs } = DEFAULT_SESSION_CONFIG.turn;
/**
 * The greeting plays from ~0.1–0.3 s into the call (later by the allowance's lead) for ~3 s
 * (turns-cases.ts), ms.
 */
const GREETING_MS = 3300;

/**
 * Barge-ins over the agent as the session's BargeIns judges them, from the gate's onsets within
 * the labelled sound: one interrupts once bargeInConfirmMs have passed since its start and the
 * caller's voice is going on; one is over (a backchannel) when the gate's speech ends and does not
 * start again within bargeInGapMs of when a quiet room would have called its end (gapAfterEndMs),
 * and the next onset starts another, unless it is heard within REJOIN_MS of that end (then it goes
 * on with the one that was over).
 */
class BargeVerdict {
  #startMs: number | undefined;
  #endMs: number | undefined;
  /** How long after the end was heard the barge-in is over unless it goes on (gapAfterEndMs). */
  #gapMs = bargeInGapMs;
  /** The last barge-in that was over, and when its end was heard. */
  #over: { startMs: number; endMs: number } | undefined;
  #nowMs = 0;
  interrupted = false;
  readonly #fromMs: number;
  readonly #toMs: number;

  constructor(fromMs: number, toMs: number) {
    this.#fromMs = fromMs;
    this.#toMs = toMs;
  }

  /** The gate's speech started at stream position `atMs`. */
  start(atMs: number): void {
    if (this.interrupted || atMs < this.#fromMs || (this.#startMs === undefined && atMs > this.#toMs)) return;
    if (this.#startMs === undefined && this.#over && this.#nowMs - this.#over.endMs <= REJOIN_MS)
      this.#startMs = this.#over.startMs;
    this.#over = undefined;
    this.#startMs ??= atMs;
    this.#endMs = undefined;
  }

  /**
   * The gate's speech ended (whenever it was called to have), heard at `nowMs`, the caller's voice
   * silent for `silentMs` by then: the gap counts from when a quiet room would have called it.
   */
  end(nowMs: number, silentMs: number): void {
    if (this.#startMs === undefined || this.interrupted) return;
    this.#endMs = nowMs;
    this.#gapMs = gapAfterEndMs(bargeInGapMs, silentMs);
  }

  frame(nowMs: number, goingOn: boolean): void {
    this.#nowMs = nowMs;
    if (this.#startMs === undefined || this.interrupted) return;
    if (this.#endMs !== undefined) {
      if (nowMs - this.#endMs >= this.#gapMs) {
        this.#over = { startMs: this.#startMs, endMs: this.#endMs };
        this.#startMs = this.#endMs = undefined;
      }
      return;
    }
    if (nowMs - this.#startMs >= bargeInConfirmMs && goingOn) this.interrupted = true;
  }
}

/** The set's calls come in on one line, as the bench's do through one bridge: each teaches it its caller's level. */
const line = new LineLevel();

/** The gate's onsets (stream ms) over the case, its events and the detector's as text, and its barge-in. */
async function gateOnsets(c: TurnCase): Promise<{
  starts: number[];
  ends: number[];
  events: string[];
  barge: BargeVerdict | undefined;
  greeting: BargeVerdict | undefined;
}> {
  const events: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const note = (tag: string) => (atMs: number) => events.push(`${tag}${Math.round(atMs)}`);
  // Over the greeting, from the call's first frame: a room's voice taken for the caller before
  // their sound stops the greeting as surely as theirs would.
  const barge =
    c.over === "silence"
      ? undefined
      : new BargeVerdict(c.over === "greeting" ? 0 : c.startMs - 200, c.endMs + 200);
  // Every call opens with the greeting: with no sound of the caller's over it, whatever stops it is the room.
  const greeting =
    c.over === "greeting"
      ? undefined
      : new BargeVerdict(0, allowance.leadMs + GREETING_MS - bargeInConfirmMs);
  const gate = new CallerVoice(
    true,
    {
      start: (atMs) => {
        starts.push(atMs);
        barge?.start(atMs);
        greeting?.start(atMs);
        note("S")(atMs);
      },
      end: (atMs) => {
        ends.push(atMs);
        const silentMs = gate.silentMs();
        barge?.end(nowMs, silentMs);
        greeting?.end(nowMs, silentMs);
        note("E")(atMs);
      },
      restart: note("R"),
    },
    // The greeting's audio is on its way from the call's first frame.
    { lineDb: line.usualDb(), agentSpeaking: () => nowMs < allowance.leadMs + GREETING_MS },
  );
  const vad = new VoiceActivityDetector(model, {
    sampleRate: 16000,
    energyGateBelowLoudestDb: VAD_GATE_BELOW_LOUDEST_DB,
    nearThreshold: VAD_NEAR_THRESHOLD,
    near: (s, e, p) => gate.near(s, e, p),
    onEvent: (e) => {
      note(e.type === "speech-start" ? "v" : "^")(e.atMs);
      if (e.type === "speech-start") gate.vadStart(e.atMs);
      else gate.vadEnd(e.atMs);
    },
  });
  // What the simulator sends, once for the whole call; then frame by frame as the bridge takes it.
  const heard = mulawDecode(mulawEncode(c.caller));
  /** The end of the frame being heard: when the gate's and the detector's events arrive. */
  let nowMs = 0;
  const resampler = new Resampler(8000, 16000);
  let frame = new Int16Array(0);
  /** The detector's last window's speech probability, for --levels. */
  let probability = 0;
  for (let i = 0; i + 160 <= heard.length; i += 160) {
    // The first frames come out shorter (the filter's delay).
    const need = resampler.outputLength(160);
    if (frame.length !== need) frame = new Int16Array(need);
    const ms = (i / 160) * 20;
    nowMs = ms + 20;
    resampler.pushInto(heard.subarray(i, i + 160), frame);
    gate.frame(frame, 16000);
    // One frame at a time, its detector events before the next frame: as the bridge hears them.
    probability = (await vad.push(frame)).windows.at(-1)?.probability ?? probability;
    const goingOn = gate.goingOn();
    barge?.frame(nowMs, goingOn);
    greeting?.frame(nowMs, goingOn);
    if (ms >= levelsFrom && ms <= levelsTo) {
      const l = gate.level;
      console.log(
        `${c.id} ${ms} ms: frame ${powerDb(meanSquare(frame)).toFixed(1)} dBFS, onset bar ${l.onsetDb().toFixed(1)}, ` +
          `resume bar ${l.resumeDb().toFixed(1)}, soft ${l.softDb().toFixed(1)}, room voice ${l.roomVoiceShare.toFixed(2)}, ` +
          `continue ${l.continueDb().toFixed(1)}, clear ${l.clearDb().toFixed(1)}, room peak ${l.roomPeakDb.toFixed(1)}, room ${l.roomDb.toFixed(1)}, caller ${l.callerDb.toFixed(1)}, ` +
          `detector ${probability.toFixed(2)}, onset ${vad.onsetPending ? "pending" : "-"}, gate onset ${gate.onsetPending(vad.onsetPending) ? "pending" : "-"}`,
      );
    }
  }
  line.learn(gate.level.callerDb, gate.callerSpeechMs);
  return { starts, ends, events, barge, greeting };
}

let missed = 0;
let coughs = 0;
let spurious = 0;
const bad: string[] = [];
/** Pause cases: how much later than the caller resumed the gate heard them (ms), by case. */
const resumeLate: { id: string; ms: number }[] = [];
/** Pause cases whose resumption the gate never heard. */
const resumeUnheard: string[] = [];
/**
 * Pause cases whose silence the gate heard over LENGTHENED_MS longer than it was (gate-pause.ts),
 * by how much: resumed_late does not see an end of the caller's speech before the pause began.
 */
const lengthened: { id: string; ms: number }[] = [];
const LENGTHENED_MS = 200;
/** Over-the-agent sounds the session would have taken wrongly: a backchannel or cough that interrupted, an interruption that did not. */
const falseBarge: string[] = [];
const missedBarge: string[] = [];
let overAgent = 0;
/** Utterances whose speech the gate ended before their words did (see CUT_MS). */
const cutShort: string[] = [];
/** Questions (complete, pause): how long after their last word the gate ended their speech, ms. */
const endLate: { id: string; ms: number }[] = [];
/** An end this late is a turn held open (the wait for its end begins there), ms. */
const HELD_MS = 400;
/** How long before the caller's last word an end of their speech counts as cutting it short, ms. */
const CUT_MS = 500;
/** Cases with no sound of the caller's over the greeting whose greeting the room's voice stopped. */
const greetingStopped: string[] = [];
for (const c of cases) {
  const { starts, ends, events, barge, greeting } = await gateOnsets(c);
  if (greeting?.interrupted) greetingStopped.push(c.id);
  if (barge) {
    overAgent++;
    if (c.category === "interrupt" && !barge.interrupted) missedBarge.push(c.id);
    if (c.category !== "interrupt" && barge.interrupted) falseBarge.push(c.id);
  }
  /** An end of the gate's in the caller's pause (if the case has one), give or take its edges. */
  const inPause = (e: number) =>
    c.pauseFromMs !== undefined &&
    c.pauseToMs !== undefined &&
    e >= c.pauseFromMs - 300 &&
    e <= c.pauseToMs + 200;
  if (c.pauseToMs !== undefined) {
    // The gate's end in the pause (if it ended the caller's speech there), and its next start: the
    // first end, as a gap inside the resumption (the detector's, between two of its words) ends
    // the speech again within the window, and is no lateness.
    const end = ends.find(inPause);
    // (The detector may end its speech and begin anew in one frame: heard at once.)
    const resumed = end === undefined ? undefined : starts.find((s) => s >= end);
    // Not heard again before their last word: the rest of what they said went unheard, and the
    // agent answered over it (the room's peaks as loud as a resumption softer than their usual).
    if (end !== undefined && (resumed === undefined || resumed >= c.endMs)) resumeUnheard.push(c.id);
    else if (resumed !== undefined) resumeLate.push({ id: c.id, ms: Math.round(resumed - c.pauseToMs) });
  }
  const longer = pauseHeardLonger(c, starts, ends);
  if (longer !== undefined && longer > LENGTHENED_MS) lengthened.push({ id: c.id, ms: longer });
  // The caller's speech ended over CUT_MS before their words did (a pause's end apart), and was not
  // heard again before them: the session would answer part of what they said, or over the rest.
  if (
    c.category !== "cough" &&
    c.category !== "backchannel" &&
    ends.some(
      (e) =>
        e > c.startMs && e < c.endMs - CUT_MS && !inPause(e) && !starts.some((a) => a >= e && a < c.endMs),
    )
  )
    cutShort.push(c.id);
  if (c.category === "complete" || c.category === "pause") {
    const end = ends.find((e) => e >= c.endMs - CUT_MS);
    if (end !== undefined) endLate.push({ id: c.id, ms: Math.round(end - c.endMs) });
  }
  const inUtterance = starts.some((a) => a >= c.startMs - 200 && a <= c.endMs);
  // The caller's own: the labelled sound, and the question asked before an over-the-reply sound.
  const theirs = (a: number) =>
    (a >= c.startMs - 200 && a <= c.endMs + 200) ||
    (c.questionEndMs !== undefined && a >= c.questionEndMs - 4000 && a <= c.questionEndMs + 200);
  const outside = starts.filter((a) => !theirs(a)).length;
  if (c.category === "cough") coughs += inUtterance ? 1 : 0;
  else if (!inUtterance) missed++;
  spurious += outside;
  const refused = !inUtterance && c.category !== "cough";
  if (refused || outside) bad.push(`${c.id}${refused ? " (missed)" : ""}${outside ? ` (+${outside})` : ""}`);
  if (values.events) {
    const pause = c.pauseFromMs === undefined ? "" : ` (pause ${c.pauseFromMs}-${c.pauseToMs})`;
    console.log(`${c.id} [${c.startMs}-${c.endMs}]${pause} ${events.join(" ")}`);
  }
}
const lates = resumeLate.map((r) => r.ms).sort((a, b) => a - b);
const endLates = endLate.map((r) => r.ms);
console.log(
  JSON.stringify({
    noise,
    cases: cases.length,
    missed,
    coughs,
    spurious,
    cases_off: bad,
    // Pauses the gate ended the caller's speech in: how late it heard them resume (p50, max), and
    // those over 200 ms (answered over, if the wait for the end of the turn ran out first).
    resume_late_ms: lates.length
      ? { n: lates.length, p50: lates[lates.length >> 1], max: lates.at(-1) }
      : undefined,
    resumed_late: resumeLate.filter((r) => r.ms > 200).map((r) => `${r.id} (${r.ms})`),
    resume_unheard: resumeUnheard,
    pause_lengthened: lengthened.map((r) => `${r.id} (+${r.ms})`),
    // Of the sounds over the agent, as BargeIns would judge them from the gate's events alone.
    over_agent: overAgent,
    false_barge_in: falseBarge,
    missed_barge_in: missedBarge,
    greeting_stopped: greetingStopped,
    cut_short: cutShort,
    end_late_ms: endLate.length
      ? { n: endLate.length, p50: percentile(endLates, 50), p90: percentile(endLates, 90) }
      : undefined,
    held_open: endLate.filter((r) => r.ms > HELD_MS).map((r) => `${r.id} (${r.ms})`),
  }),
);
