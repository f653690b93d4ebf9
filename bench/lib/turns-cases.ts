// The labelled sets of the turn-taking benchmark: caller recordings made by a synthesizer (and
// synthetic coughs), each laid on a fixed call timeline so the true speech boundaries are
// known to the sample. Deterministic: voices, speeds, levels, offsets and noise come from
// fixed lists and a seeded PRNG, and the resampling is in-process, so every run plays the
// same samples (PocketSphinx turns even a different dither into different words).
// The project set (buildCases, espeak-ng) is what turn-taking settings are tuned on; the
// held-out set (turns-flite.ts) is built the same way from another synthesizer and phrases.

import { concatPcm } from "../../codecs/pcm.ts";
import { noise, seededRandom } from "../../test/helpers/noise.ts";
import { mixPcm, silence, trimSilence } from "../../test/helpers/speech.ts";
import type { TimelineCue } from "../../tools/twilio-sim/caller-timeline.ts";
import { espeakSpeech } from "./measure.ts";
import { cough, gain } from "./turns-audio.ts";

export const CALL_RATE = 8000;

export type Category = "complete" | "pause" | "backchannel" | "cough" | "interrupt";

/** What the caller's labelled sound is laid over. */
export type Over = "silence" | "greeting" | "reply";

export interface TurnCase {
  id: string;
  category: Category;
  /** The words (or "cough 220 ms"). */
  text: string;
  voice: string;
  /** The synthesizer's speed setting (espeak-ng: words per minute; flite: duration stretch). */
  speed: number;
  over: Over;
  /** Background noise level over the whole call, dBFS, if any. */
  noiseDbfs?: number;
  /** Pause cases: the pause inside the utterance, and whether the words before it form a sentence. */
  pauseMs?: number;
  firstPartComplete?: boolean;
  /** The whole caller side of the call, 8 kHz, from the first media frame. */
  caller: Int16Array;
  /** The labelled sound on the call's timeline (ms). */
  startMs: number;
  endMs: number;
  /** Pause cases: the silent gap inside the utterance. */
  pauseFromMs?: number;
  pauseToMs?: number;
  /** Over-the-reply cases: the question asked first to get the long fallback reply. */
  questionStartMs?: number;
  questionEndMs?: number;
  /** `--hello`: the caller's "Hello?" on the call's timeline (turns-hello.ts). */
  helloFromMs?: number;
  helloToMs?: number;
  /**
   * Over-the-agent cases: how far into the agent's speech the sound begins on this timeline, ms
   * (counting on the agent beginning when a local service has it begin). A timeline that waits for
   * the agent (turns-allowance.ts) puts the sound there whenever the agent begins.
   */
  agentMs?: number;
  /** Where the timeline waits for the agent (the simulator's cues; turns-allowance.ts). */
  cues?: TimelineCue[];
  /** A safety limit: calls end when the agent has had its say (see runCase). */
  maxSeconds: number;
}

const VOICES = [
  "en-us",
  "en-gb",
  "en-us+f3",
  "en-gb-scotland",
  "en-us+m3",
  "en-gb-x-rp",
  "en-029",
  "en-us+f2",
  "en-gb-x-gbclan",
  "en-us-nyc",
  "en-us+f4",
];
const SPEEDS = [150, 165, 180, 140, 175, 160, 190, 155, 170, 145];

/** When the greeting ("Thanks for calling Acme Bikes. How can I help you?", ~3 s) is surely over. */
const AFTER_GREETING_MS = 4200;
/** Asked first in over-the-reply cases: no rule matches it, so the long fallback answers (~8 s). */
const QUESTION = "I have a question about my bike's gears";

const COMPLETE = [
  "What are your opening hours?",
  "Where is your shop?",
  "I want to check the status of my order.",
  "Can I speak to a person please?",
  "Are you open on Sunday?",
  "My order number is four five six seven.",
  "Thank you very much.",
  "Hello, is this Acme Bikes?",
  "Do you repair electric bikes?",
  "I would like to book a service for my bike.",
  "When do you close today?",
  "Where can I find you?",
  "I need help with a delivery.",
  "Is my bike ready for pickup?",
];

/** [before the pause, after it, are the words before it a complete sentence?] */
const PAUSED: Array<[string, string, boolean]> = [
  ["I would like to check", "the status of my order.", false],
  ["My order number is", "four five six seven.", false],
  ["I bought a bike from you", "and the brakes are squeaking.", true],
  ["Can you tell me", "when you open on Saturday?", false],
  ["I was wondering if", "you sell children's helmets.", false],
  ["So the thing is", "my delivery never arrived.", false],
  ["Hi, um", "I need to talk to someone about a refund.", false],
  ["I ordered a red bike", "but you sent me a blue one.", true],
  ["Could you please", "tell me your address?", false],
  ["The order was placed on Monday", "and it still hasn't shipped.", true],
  ["I need to change", "the delivery address.", false],
  ["What time do you", "close on Friday?", false],
  ["I'm calling about", "a repair I booked last week.", false],
  ["Yes, the number is", "one two three, four five six.", true],
];
const PAUSES_MS = [200, 250, 300, 350, 400, 450, 500, 550, 600, 650, 700, 300, 500, 700];

const BACKCHANNELS = ["uh-huh", "okay", "yeah", "mm hmm", "right", "uh huh", "sure", "okay", "yeah", "I see"];
const COUGH_MS = [150, 180, 210, 240, 270, 300];

const INTERRUPTIONS = [
  "Wait, stop, I need to change my order.",
  "Hold on, that's not what I asked.",
  "No no, I want to talk to a person.",
  "Sorry, can you repeat that?",
  "Excuse me, I need my order status.",
  "Stop. I just want your opening hours.",
  "Actually, where are you located?",
  "Hang on, my order number is one two three.",
  "Wait, wait, I have a question.",
  "Excuse me, could you stop for a second?",
];

interface Placed {
  caller: Int16Array;
  startMs: number;
  endMs: number;
  questionStartMs?: number;
  questionEndMs?: number;
  agentMs?: number;
}

/**
 * Where a local service's agent speaks: its greeting, from and to (ms into the stream); its fallback
 * reply, from after the question's end, and for how long.
 */
export const GREETING_BEGINS_MS = 200;
export const GREETING_ENDS_MS = 3400;
export const REPLY_BEGINS_MS = 900;
export const REPLY_MS = 8000;

const ms = (samples: number) => (samples * 1000) / CALL_RATE;

/** A caller's voice: which one, how fast, how loud. */
export interface VoicePick {
  voice: string;
  speed: number;
  gainDb?: number;
}

/** A synthesizer of caller speech at the call's rate. */
export interface Synth {
  /** The text spoken, untrimmed. */
  speak(text: string, v: VoicePick): Int16Array;
  /**
   * The words around an SSML break spoken as one sentence, cut to where it is audible, and where
   * the break's silence lies in it (samples).
   */
  speakWithBreak(before: string, after: string, v: VoicePick): { pcm: Int16Array; gap: Gap };
}

export interface Gap {
  from: number;
  to: number;
}

export const espeakSynth: Synth = {
  speak: (text, v) => espeakSpeech(text, CALL_RATE, { voice: v.voice, wpm: v.speed }),
  // The break is 900 ms of silence: the longest quiet stretch (with the stop closures beside it).
  speakWithBreak(before, after, v) {
    const ssml = `<speak>${before} <break time="900ms"/> ${after}</speak>`;
    const pcm = trimSilence(
      espeakSpeech(ssml, CALL_RATE, { voice: v.voice, wpm: v.speed, ssml: true }),
      CALL_RATE,
    );
    const gap = longestQuietRun(pcm, CALL_RATE);
    if (gap.to - gap.from < CALL_RATE * 0.8) throw new Error(`no break found in "${before} … ${after}"`);
    return { pcm, gap };
  },
};

/** Speech at the call's rate, cut to where it is audible, `gainDb` louder. */
function speak(synth: Synth, text: string, o: VoicePick): Int16Array {
  const pcm = trimSilence(synth.speak(text, o), CALL_RATE);
  return o.gainDb ? gain(pcm, o.gainDb) : pcm;
}

/** The longest run of 5 ms frames below -50 dBFS inside `pcm`, in samples (`trimSilence`'s level). */
function longestQuietRun(pcm: Int16Array, rate: number): Gap {
  const frame = Math.round(rate / 200);
  const limit = (32768 * 10 ** (-50 / 20)) ** 2;
  let best = { from: 0, to: 0 };
  let runFrom = -1;
  for (let s = 0; s + frame <= pcm.length; s += frame) {
    let sum = 0;
    for (let i = s; i < s + frame; i++) sum += pcm[i]! * pcm[i]!;
    if (sum / frame <= limit) {
      if (runFrom < 0) runFrom = s;
      if (s + frame - runFrom > best.to - best.from) best = { from: runFrom, to: s + frame };
    } else runFrom = -1;
  }
  return best;
}

/**
 * A sentence with a pause inside it, as a caller who stops mid-sentence says it. The synthesizer
 * speaks the whole sentence as one utterance with an SSML break where the pause goes, so the words
 * before the pause keep the intonation of a sentence that goes on; synthesized on their own they
 * would end with the fall of a finished sentence, which no listener could tell from the end of a
 * turn. The break's silence (with the stop closures beside it) is then replaced by exactly
 * `pauseMs` of it.
 */
function sayPaused(
  synth: Synth,
  before: string,
  after: string,
  pauseMs: number,
  o: VoicePick,
): { pcm: Int16Array; firstSamples: number } {
  const { pcm: whole, gap } = synth.speakWithBreak(before, after, o);
  const pcm = concatPcm([whole.subarray(0, gap.from), silence(pauseMs, CALL_RATE), whole.subarray(gap.to)]);
  return { pcm: o.gainDb ? gain(pcm, o.gainDb) : pcm, firstSamples: gap.from };
}

/** Lays `sound` on the timeline: after the greeting, over it, or over the fallback reply. */
function place(sound: Int16Array, over: Over, offsetMs: number, question: () => Int16Array): Placed {
  if (over === "silence") {
    const lead = silence(AFTER_GREETING_MS + offsetMs, CALL_RATE);
    return {
      caller: concatPcm([lead, sound]),
      startMs: ms(lead.length),
      endMs: ms(lead.length + sound.length),
    };
  }
  if (over === "greeting") {
    // The greeting starts ~0.1–0.3 s into the stream and lasts ~3 s.
    const lead = silence(offsetMs, CALL_RATE);
    return {
      caller: concatPcm([lead, sound]),
      startMs: ms(lead.length),
      endMs: ms(lead.length + sound.length),
      agentMs: offsetMs - GREETING_BEGINS_MS,
    };
  }
  const lead = silence(AFTER_GREETING_MS, CALL_RATE);
  const asked = question();
  // The reply starts ~0.6–1.2 s after the question ends; `offsetMs` is counted from the question's end.
  const gap = silence(offsetMs, CALL_RATE);
  const before = lead.length + asked.length + gap.length;
  return {
    caller: concatPcm([lead, asked, gap, sound]),
    startMs: ms(before),
    endMs: ms(before + sound.length),
    questionStartMs: ms(lead.length),
    questionEndMs: ms(lead.length + asked.length),
    agentMs: offsetMs - REPLY_BEGINS_MS,
  };
}

/**
 * Adds seeded background noise from the start of the call to 4 s after the labelled sound, which
 * covers every decision the case judges (the simulator hangs up only after the caller's timeline).
 */
function withNoise(c: TurnCase, dbfs: number, seed: number): TurnCase {
  const bedMs = c.endMs + 4000;
  const bed = noise(bedMs, CALL_RATE, { dbfs, seed, color: seed % 2 ? "pink" : "white" });
  return { ...c, caller: mixPcm(bed, c.caller), noiseDbfs: dbfs };
}

/** What one labelled set is made of: its phrases, voices and seeds, and who speaks them. */
export interface CaseSetSpec {
  synth: Synth;
  voices: readonly string[];
  speeds: readonly number[];
  complete: readonly string[];
  /** [before the pause, after it, are the words before it a complete sentence?] */
  paused: ReadonlyArray<readonly [string, string, boolean]>;
  pausesMs: readonly number[];
  backchannels: readonly string[];
  coughMs: readonly number[];
  interruptions: readonly string[];
  /** Seeds of the set's PRNG, its coughs (+ i) and its noise beds (+ i). */
  seed: number;
  coughSeed: number;
  noiseSeed: number;
  /** No noise beds (the noisy set lays its own backgrounds under every case). */
  noNoiseBeds?: boolean;
}

export function buildSet(spec: CaseSetSpec): TurnCase[] {
  const rand = seededRandom(spec.seed);
  const cases: TurnCase[] = [];
  let n = 0;
  const pick = (): VoicePick => {
    const i = n++;
    return {
      voice: spec.voices[i % spec.voices.length]!,
      speed: spec.speeds[i % spec.speeds.length]!,
      gainDb: Math.round((rand() * 6 - 3) * 10) / 10,
    };
  };
  const say = (text: string, p: VoicePick) => speak(spec.synth, text, p);
  const question = (p: VoicePick) => () => speak(spec.synth, QUESTION, { voice: p.voice, speed: p.speed });
  // Complete utterances: long enough for the reply (the fallback is ~8 s) to play out, as its
  // metrics are filed only once it has. Others are judged within ~2 s of the sound's end.
  const tailS = (endMs: number, category?: Category) =>
    Math.ceil((endMs + (category === "complete" ? 15_000 : 3500)) / 1000);

  spec.complete.forEach((text, i) => {
    const p = pick();
    const at = place(say(text, p), "silence", Math.round(rand() * 600), question(p));
    cases.push({
      id: `complete-${i + 1}`,
      category: "complete",
      text,
      voice: p.voice,
      speed: p.speed,
      over: "silence",
      ...at,
      maxSeconds: tailS(at.endMs, "complete"),
    });
  });

  spec.paused.forEach(([a, b, complete], i) => {
    const p = pick();
    const pause = spec.pausesMs[i]!;
    const { pcm: clip, firstSamples } = sayPaused(spec.synth, a, b, pause, p);
    const at = place(clip, "silence", Math.round(rand() * 600), question(p));
    cases.push({
      id: `pause-${i + 1}`,
      category: "pause",
      text: `${a} … ${b}`,
      voice: p.voice,
      speed: p.speed,
      over: "silence",
      pauseMs: pause,
      firstPartComplete: complete,
      ...at,
      pauseFromMs: at.startMs + ms(firstSamples),
      pauseToMs: at.startMs + ms(firstSamples) + pause,
      maxSeconds: tailS(at.endMs),
    });
  });

  // Over the agent: half over the greeting, half over the fallback reply.
  const overAgent = (i: number): { over: Over; offsetMs: number } =>
    i % 2 === 0
      ? { over: "greeting", offsetMs: 700 + Math.round(rand() * 900) }
      : { over: "reply", offsetMs: 2200 + Math.round(rand() * 2000) };

  spec.backchannels.forEach((text, i) => {
    const p = pick();
    const { over, offsetMs } = overAgent(i);
    const at = place(say(text, p), over, offsetMs, question(p));
    cases.push({
      id: `backchannel-${i + 1}`,
      category: "backchannel",
      text,
      voice: p.voice,
      speed: p.speed,
      over,
      ...at,
      maxSeconds: tailS(at.endMs),
    });
  });

  spec.coughMs.forEach((durationMs, i) => {
    const p = pick();
    const { over, offsetMs } = overAgent(i);
    const burst = cough(CALL_RATE, {
      durationMs,
      seed: spec.coughSeed + i,
      centreHz: 600 + Math.round(rand() * 900),
      dbfs: -22 + p.gainDb!,
    });
    const at = place(burst, over, offsetMs, question(p));
    cases.push({
      id: `cough-${i + 1}`,
      category: "cough",
      text: `cough ${durationMs} ms`,
      voice: "synthetic",
      speed: 0,
      over,
      ...at,
      maxSeconds: tailS(at.endMs),
    });
  });

  spec.interruptions.forEach((text, i) => {
    const p = pick();
    const { over, offsetMs } = overAgent(i);
    const at = place(
      say(text, p),
      over,
      over === "greeting" ? Math.min(offsetMs, 1100) : offsetMs,
      question(p),
    );
    cases.push({
      id: `interrupt-${i + 1}`,
      category: "interrupt",
      text,
      voice: p.voice,
      speed: p.speed,
      over,
      ...at,
      maxSeconds: tailS(at.endMs),
    });
  });

  // Background noise on every fourth case, -45 to -35 dBFS.
  const levels = [-45, -42, -40, -38, -35];
  if (spec.noNoiseBeds) return cases;
  return cases.map((c, i) =>
    i % 4 === 3 ? withNoise(c, levels[(i >> 2) % levels.length]!, spec.noiseSeed + i) : c,
  );
}

/** The project set: espeak-ng voices, the set turn-taking settings are tuned on. */
export function buildCases(): TurnCase[] {
  return buildSet({
    synth: espeakSynth,
    voices: VOICES,
    speeds: SPEEDS,
    complete: COMPLETE,
    paused: PAUSED,
    pausesMs: PAUSES_MS,
    backchannels: BACKCHANNELS,
    coughMs: COUGH_MS,
    interruptions: INTERRUPTIONS,
    seed: 20260501,
    coughSeed: 7000,
    noiseSeed: 9100,
  });
}
