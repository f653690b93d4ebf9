// The labelled answers of the AMD benchmark, written before the detector was run on them and
// never tuned on: how people answer the phone (a word or a short sentence, then they wait; some
// say it again) and how voicemails answer (a greeting of one or several sentences, then a beep of
// some pitch and length, or no beep), spoken by espeak-ng and flite voices at the call's rate.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { concatPcm } from "../../codecs/pcm.ts";
import { resample } from "../../codecs/resample.ts";
import { parseWav } from "../../codecs/wav.ts";
import { trimSilence } from "../../test/helpers/speech.ts";
import { espeakSpeech } from "./measure.ts";

export const RATE = 8000;

export interface AmdCase {
  readonly name: string;
  readonly truth: "human" | "machine";
  readonly pcm: Int16Array;
  /** Human: where their (first) greeting ends, ms from the answer. */
  readonly speechEndMs?: number;
  /** Machine with a beep: where the beep ends, ms from the answer. */
  readonly beepEndMs?: number;
}

type Voice = { kind: "espeak"; voice: string; wpm?: number } | { kind: "flite"; voice: string };

const VOICES: readonly Voice[] = [
  { kind: "espeak", voice: "en-us" },
  { kind: "flite", voice: "slt" },
  { kind: "espeak", voice: "en-gb", wpm: 150 },
  { kind: "flite", voice: "kal" },
  { kind: "espeak", voice: "en-us+f3", wpm: 175 },
  { kind: "flite", voice: "rms" },
  { kind: "espeak", voice: "en-gb-x-rp" },
  { kind: "flite", voice: "awb" },
];

function speak(text: string, v: Voice): Int16Array {
  if (v.kind === "espeak")
    return trimSilence(espeakSpeech(text, RATE, { voice: v.voice, wpm: v.wpm ?? 160 }), RATE);
  const dir = mkdtempSync(join(tmpdir(), "amd-flite-"));
  try {
    const out = join(dir, "s.wav");
    const r = spawnSync("flite", ["-voice", v.voice, "-t", text, "-o", out]);
    if (r.status !== 0) throw new Error(`flite failed: ${r.stderr?.toString()}`);
    const wav = parseWav(new Uint8Array(readFileSync(out)));
    return trimSilence(resample(wav.samples, wav.sampleRate, RATE), RATE);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const quiet = (ms: number) => new Int16Array(Math.round((ms * RATE) / 1000));
const ms = (pcm: Int16Array) => (pcm.length / RATE) * 1000;

function tone(hz: number, lengthMs: number, level = 6000): Int16Array {
  const out = new Int16Array(Math.round((lengthMs * RATE) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(level * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

const PEOPLE = [
  "Hello?",
  "Hello.",
  "Yes?",
  "Hi, who is this?",
  "Hello, this is Sam.",
  "Good morning.",
  "Yeah, hello?",
  "Speaking.",
  "Hello, Dana speaking.",
  "Hi there.",
];

const GREETINGS = [
  "Hi, you have reached Alex. I can't come to the phone right now. Please leave a message after the tone.",
  "The person you are trying to reach is not available. At the tone, please record your message.",
  "Hello, this is Jordan. Sorry I missed your call. Leave your name and number and I will call you back.",
  "You have reached the office of Doctor Patel. Our office is currently closed. Please leave a message.",
  "Hey, it's Chris. Leave a message.",
  "Thank you for calling. No one is available to take your call. Please leave a message after the beep.",
];

/** Beeps: pitch Hz and length ms, or none. */
const BEEPS: readonly ({ hz: number; ms: number } | undefined)[] = [
  { hz: 1000, ms: 500 },
  { hz: 440, ms: 800 },
  { hz: 850, ms: 300 },
  { hz: 1400, ms: 200 },
  { hz: 2000, ms: 400 },
  undefined,
];

/** People: 20 answers (each phrase in two voices); every third says hello again after a pause. */
function people(): AmdCase[] {
  const out: AmdCase[] = [];
  for (let i = 0; i < 20; i++) {
    const v = VOICES[i % VOICES.length]!;
    const words = speak(PEOPLE[i % PEOPLE.length]!, v);
    const lead = 300 + ((i * 137) % 500);
    const again = i % 3 === 2 ? [quiet(2500), speak("Hello? Anyone there?", v)] : [];
    out.push({
      name: `person-${i}-${v.voice}`,
      truth: "human",
      pcm: concatPcm([quiet(lead), words, ...again, quiet(8000)]),
      speechEndMs: lead + ms(words),
    });
  }
  return out;
}

/** Voicemails: 24 answers (each greeting in four voices, beeps of several kinds, some none). */
function voicemails(): AmdCase[] {
  const out: AmdCase[] = [];
  for (let i = 0; i < 24; i++) {
    const v = VOICES[(i * 3 + 1) % VOICES.length]!;
    const greeting = speak(GREETINGS[i % GREETINGS.length]!, v);
    const beep = BEEPS[i % BEEPS.length];
    const lead = 200 + ((i * 89) % 400);
    const gap = 300 + ((i * 211) % 700);
    const parts = [quiet(lead), greeting, quiet(gap)];
    let beepEndMs: number | undefined;
    if (beep) {
      parts.push(tone(beep.hz, beep.ms));
      beepEndMs = lead + ms(greeting) + gap + beep.ms;
    }
    parts.push(quiet(15000));
    out.push({
      name: `voicemail-${i}-${v.voice}-${beep ? `${beep.hz}Hz-${beep.ms}ms` : "no-beep"}`,
      truth: "machine",
      pcm: concatPcm(parts),
      ...(beepEndMs !== undefined ? { beepEndMs } : {}),
    });
  }
  return out;
}

export function amdSet(): AmdCase[] {
  return [...people(), ...voicemails()];
}
