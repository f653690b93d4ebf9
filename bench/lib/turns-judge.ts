// Judges one benchmark call: what the bridge did with the labelled sound, from the bridge's own
// record (GET /calls/:id) and from what the simulated caller heard and received (agent audio on
// the call's timeline, `clear` times). The truth is the case's timeline, not either party's VAD.

import type { CallEvent, CallRecord, TurnMetrics } from "../../src/records/call-record.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { EARLY_ANSWER_DROPPED } from "../../src/session/early-answer-pause.ts";
import type { SimResult } from "../../tools/twilio-sim/simulate.ts";
import { type CaseAnswers, caseAnswers } from "./turns-answers.ts";
import { audibleBetween, audibleMs, firstAudible } from "./turns-audio.ts";
import type { TurnCase } from "./turns-cases.ts";
import { MIN_REPEAT_WORDS, type Repeats, repeatedWords, sentenceWords } from "./turns-repeats.ts";
import type { SpokenSentence } from "./turns-tts-tap.ts";

export interface Outcome {
  id: string;
  /** The call's id at the bridge (its log lines and record carry it). */
  callSid?: string;
  category: TurnCase["category"];
  over: TurnCase["over"];
  text: string;
  /** Length of the labelled sound, ms. */
  soundMs: number;
  noiseDbfs?: number;
  /** False when the call did not set the scene the case needs (e.g. the agent was not speaking). */
  valid: boolean;
  invalidWhy?: string;
  userTexts: string[];
  bargeIns: { interrupted: number; resumed: number };
  /**
   * Calls whose caller made no sound over the greeting: an interruption recorded before their
   * first sound (the room's voice taken for theirs stopped the greeting).
   */
  greetingStopped?: boolean;
  // complete utterances
  eouDelayMs?: number;
  asrMs?: number;
  voiceToVoiceMs?: number;
  /** End of speech (truth) → first agent audio the caller heard. */
  callerVoiceToVoiceMs?: number;
  /** eouDelayMs corrected by the gap between the bridge's end of speech and the truth. */
  callerEouDelayMs?: number;
  // pauses
  pauseMs?: number;
  firstPartComplete?: boolean;
  premature?: boolean;
  /** The agent was heard between the pause's start and the end of the utterance. */
  prematureAudible?: boolean;
  /** Agent audio heard while the caller spoke the rest of the utterance (after the pause), ms. */
  talkedOverMs?: number;
  /** Agent audio heard from the pause's start to the end of the utterance (talk-over), ms. */
  talkOverMs?: number;
  // over the agent
  /** A `clear` reached the caller during (or within 1 s after) the sound: the agent paused or stopped. */
  paused?: boolean;
  falseBargeIn?: boolean;
  /**
   * Backchannels and coughs the agent paused for and went on after: the end of the sound (truth) →
   * the agent heard again. The silence the caller hears after their "mm hmm".
   */
  resumedAfterMs?: number;
  missed?: boolean;
  /**
   * Interruptions: agent audio heard after the first `clear` while the caller still spoke, ms (the
   * agent resumed at a comma's pause, "Wait, | that's the wrong shop", and talked over the rest).
   */
  talkOverAfterClearMs?: number;
  /** Caller speech start (truth) → `clear` received. */
  clearMs?: number;
  bridgeBargeInMs?: number;
  /** The bridge's replies and whether the question was answered (service-time figures). */
  answers?: CaseAnswers;
  /** Complete utterances: the caller heard the apology after it instead of an answer. */
  apology?: boolean;
  /** Complete utterances: the caller was asked to say it again (no words made out in their voice). */
  askedAgain?: boolean;
  /** Complete utterances: end of speech (truth) → the first agent audio heard after it, whatever it was. */
  heardAfterMs?: number;
  /**
   * Pauses of the agent while the caller made no sound (a `clear` neither during any of their
   * sounds nor within 1 s after one): the room's. Each: how long the agent stayed silent, ms, or
   * null when it was not heard again before the caller next spoke (stopped).
   */
  roomPauses: Array<number | null>;
  /** Agent audio the caller heard twice within one reply, and the delivered sentences found (turns-repeats.ts). */
  repeats?: { words: number; ms: number; found: number; heard: Repeats["runs"] };
  error?: string;
}

const RATE = 8000;
/** The bench's agent keeps the default apology and words that ask again (no --set agent.apologyText in its runs). */
const APOLOGY = DEFAULT_SESSION_CONFIG.apologyText;
const ASK_AGAIN = DEFAULT_SESSION_CONFIG.askAgainText;
/**
 * How far into a sound over the agent, at least, a reply that went on would be heard, ms: a cough
 * ends before the bridge could pause for it, and the reply's next words may be a breath away.
 */
const RAN_OUT_LOOK_MS = 700;

function asRecord(t: unknown): CallRecord | undefined {
  if (typeof t !== "object" || t === null || !Array.isArray((t as CallRecord).events)) return undefined;
  return t as CallRecord;
}

type Assistant = Extract<CallEvent, { type: "assistant" }>;

/** `spoken`: the sentences the bridge's speech sessions delivered meanwhile (turns-tts-tap.ts), for repeats. */
export function judge(c: TurnCase, sim: SimResult, spoken?: readonly SpokenSentence[]): Outcome {
  const record = asRecord(sim.transcript);
  const out: Outcome = {
    id: c.id,
    category: c.category,
    over: c.over,
    text: c.text,
    soundMs: Math.round(c.endMs - c.startMs),
    ...(c.noiseDbfs !== undefined ? { noiseDbfs: c.noiseDbfs } : {}),
    valid: true,
    userTexts: [],
    bargeIns: { interrupted: 0, resumed: 0 },
    roomPauses: roomPauses(c, sim),
    answers: caseAnswers(c, sim.agentAudio, RATE, record?.events),
  };
  if (!record) return { ...out, valid: false, invalidWhy: `no call record: ${sim.transcriptError ?? "?"}` };
  const events = record.events;
  if (spoken) out.repeats = repeatsOf(c, sim.agentAudio, events, spoken);
  // User turns from the labelled sound: those recorded after the sound began (in over-the-reply
  // cases the question's turn is confirmed well before it; a "Hello?" said first, `--hello`, is
  // recorded before it too). Event times are wall clock; the call's start event is within a few ms
  // of the stream's first frame.
  const t0 = Date.parse(record.startedAt);
  const from = c.startMs - 200;
  const users = events.flatMap((e, i) =>
    e.type === "user" && Date.parse(e.at) - t0 >= from ? [{ e, i }] : [],
  );
  out.userTexts = users.map((u) => u.e.text);
  // Talk over the agent decided before the sound began was not about it: in an over-the-reply case,
  // the question cutting into a greeting that a fault had made late.
  for (const e of events) {
    if (e.type === "barge-in" && Date.parse(e.at) - t0 >= c.startMs) out.bargeIns[e.outcome] += 1;
  }
  if (c.over !== "greeting") {
    const firstSoundMs = c.questionStartMs ?? c.startMs;
    out.greetingStopped = events.some(
      (e) => e.type === "barge-in" && e.outcome === "interrupted" && Date.parse(e.at) - t0 < firstSoundMs,
    );
  }
  const agent = sim.agentAudio;
  const speakingAt = (ms: number) => audibleBetween(agent, RATE, ms - 300, ms + 40);

  if (c.category === "complete" || c.category === "pause") {
    if (speakingAt(c.startMs))
      return { ...out, valid: false, invalidWhy: "agent still speaking at speech start" };
  } else if (!speakingAt(c.startMs)) {
    return { ...out, valid: false, invalidWhy: "agent not speaking at the sound's start" };
  }

  if (c.category === "complete") {
    // The apology is recorded as a reply of its own, with or without the caller's words before it
    // (after a failed recognition there are none), or after the part of an answer that played.
    const apologized = events.some(
      (e) => e.type === "assistant" && e.generated === APOLOGY && Date.parse(e.at) - t0 >= c.startMs,
    );
    const heardAt = firstAudible(agent, RATE, c.endMs, c.endMs + 10_000);
    if (heardAt !== null) out.heardAfterMs = Math.round(heardAt - c.endMs);
    out.apology = apologized && heardAt !== null;
    // Asked again about this question: the first words after it (a room's sound asked about later is not).
    const first = events.find((e) => e.type === "assistant" && Date.parse(e.at) - t0 >= c.startMs);
    out.askedAgain = first?.type === "assistant" && first.generated === ASK_AGAIN && heardAt !== null;
    const u = users[0];
    if (!u) return { ...out, invalidWhy: "no user turn recorded (nothing recognized)" };
    const reply = events.slice(u.i + 1).find((e): e is Assistant => e.type === "assistant");
    const m: TurnMetrics = reply?.metrics ?? {};
    if (m.eouDelayMs !== undefined) out.eouDelayMs = m.eouDelayMs;
    if (m.asrMs !== undefined) out.asrMs = m.asrMs;
    if (m.voiceToVoiceMs !== undefined) out.voiceToVoiceMs = m.voiceToVoiceMs;
    if (out.heardAfterMs !== undefined) out.callerVoiceToVoiceMs = out.heardAfterMs;
    if (
      m.eouDelayMs !== undefined &&
      m.voiceToVoiceMs !== undefined &&
      out.callerVoiceToVoiceMs !== undefined
    ) {
      out.callerEouDelayMs = m.eouDelayMs + out.callerVoiceToVoiceMs - m.voiceToVoiceMs;
    }
    return out;
  }

  if (c.category === "pause") {
    out.pauseMs = c.pauseMs!;
    out.firstPartComplete = c.firstPartComplete!;
    out.prematureAudible = audibleBetween(agent, RATE, c.pauseFromMs!, c.endMs);
    out.premature = users.length >= 2 || out.prematureAudible;
    out.talkedOverMs = audibleMs(agent, RATE, c.pauseToMs!, c.endMs);
    out.talkOverMs = audibleMs(agent, RATE, c.pauseFromMs!, c.endMs);
    return out;
  }

  const clear = sim.clears.find((t) => t >= c.startMs - 20 && t <= c.endMs + 1000);
  // A reply that ran out as the sound began left nothing to interrupt: it was never cleared, no
  // talk over the agent was recorded, and nothing of it was heard from when the bridge could first
  // have paused it (bargeInMinMs) to the sound's end. The bridge then rightly takes the sound as a
  // turn of its own.
  const pauseFrom = c.startMs + DEFAULT_SESSION_CONFIG.turn.bargeInMinMs;
  const ranOut =
    clear === undefined &&
    out.bargeIns.interrupted + out.bargeIns.resumed === 0 &&
    !audibleBetween(agent, RATE, pauseFrom, Math.max(c.endMs, c.startMs + RAN_OUT_LOOK_MS));
  if (ranOut) return { ...out, valid: false, invalidWhy: "the agent's reply ran out as the sound began" };
  out.paused = clear !== undefined;
  // An interruption is held silent until its words are in (src/session/interruptions.ts): one still
  // held when the call ended is recorded neither way, and what the caller heard is an agent that
  // stopped. So talk over the agent that paused it, was not recorded as a backchannel, and after
  // which the agent was not heard again, stopped it.
  // An early answer dropped for the sound (answer-grace.ts) stopped too: the agent fell silent for
  // it and answered the caller's words with what came before them, as one turn.
  const stoppedUnrecorded =
    (clear !== undefined &&
      out.bargeIns.interrupted === 0 &&
      out.bargeIns.resumed === 0 &&
      !audibleBetween(agent, RATE, clear + 100, (agent.length / RATE) * 1000)) ||
    events.some(
      (e) => e.type === "note" && e.text === EARLY_ANSWER_DROPPED && Date.parse(e.at) - t0 >= c.startMs,
    );
  if (c.category === "interrupt") {
    out.missed = out.bargeIns.interrupted === 0 && !stoppedUnrecorded;
    if (!out.missed && clear !== undefined) {
      out.clearMs = Math.round(clear - c.startMs);
      out.talkOverAfterClearMs = audibleMs(agent, RATE, clear + CLEAR_TAIL_MS, c.endMs);
    }
    const cut = events.find((e): e is Assistant => e.type === "assistant" && e.interrupted);
    if (cut?.metrics.bargeInMs !== undefined) out.bridgeBargeInMs = cut.metrics.bargeInMs;
  } else {
    out.falseBargeIn = out.bargeIns.interrupted > 0 || stoppedUnrecorded;
    const back =
      clear === undefined || out.falseBargeIn ? null : firstAudible(agent, RATE, c.endMs, c.endMs + 10_000);
    if (back !== null) out.resumedAfterMs = Math.round(back - c.endMs);
  }
  return out;
}

/** What a `clear` may still let through at the caller (a frame in flight), ms. */
const CLEAR_TAIL_MS = 60;
/** A `clear` this long after a caller's sound ended is still about it (the detector's end comes late), ms. */
const CAUSED_WITHIN_MS = 1000;

/** The caller's own sounds on the call's timeline: the labelled one, the question, the "Hello?". */
function callerSounds(c: TurnCase): Array<[number, number]> {
  const sounds: Array<[number, number]> = [[c.startMs, c.endMs]];
  if (c.questionStartMs !== undefined && c.questionEndMs !== undefined)
    sounds.push([c.questionStartMs, c.questionEndMs]);
  if (c.helloFromMs !== undefined && c.helloToMs !== undefined) sounds.push([c.helloFromMs, c.helloToMs]);
  return sounds.sort((a, b) => a[0] - b[0]);
}

/** The room's pauses of the agent in `sim` (Outcome.roomPauses). */
function roomPauses(c: TurnCase, sim: SimResult): Array<number | null> {
  const sounds = callerSounds(c);
  const endMs = (sim.agentAudio.length / RATE) * 1000;
  const out: Array<number | null> = [];
  let after = -Infinity;
  for (const t of sim.clears) {
    if (t <= after) continue; // the same silence, cleared again
    if (sounds.some(([s, e]) => t >= s - 20 && t <= e + CAUSED_WITHIN_MS)) continue;
    // Nothing was sounding: the pause cost the caller nothing.
    if (!audibleBetween(sim.agentAudio, RATE, t - 200, t + 20)) continue;
    const next = sounds.find(([s]) => s > t)?.[0] ?? endMs;
    const back = firstAudible(sim.agentAudio, RATE, t + CLEAR_TAIL_MS, next);
    out.push(back === null ? null : Math.round(back - t));
    after = back ?? next;
  }
  return out;
}

/** Repeats in the case's recording; the caller's labelled sound (and question) parts two replies. */
function repeatsOf(
  c: TurnCase,
  agent: Int16Array,
  events: readonly CallEvent[],
  spoken: readonly SpokenSentence[],
) {
  const callerBetween = (from: number, to: number) =>
    (from < c.endMs && to > c.startMs) ||
    (c.questionEndMs !== undefined && from < c.questionEndMs && to > c.questionEndMs);
  // The model's own repetition is not the bridge's: a sentence twice in one answer's words.
  const answers = events.flatMap((e) => (e.type === "assistant" ? [sentenceWords(e.generated)] : []));
  const saidTwice = (text: string) => answers.some((a) => a.split(text).length > 2);
  const r = repeatedWords(agent, RATE, spoken, callerBetween, saidTwice);
  // Which words, where in the call: what the trace of that call is read against.
  return {
    words: r.words,
    ms: r.ms,
    found: r.found,
    heard: r.runs.filter((run) => run.words >= MIN_REPEAT_WORDS),
  };
}
