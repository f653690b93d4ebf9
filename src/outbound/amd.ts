// Answering-machine detection from the first seconds after the answer, on physical grounds:
// people answer with a short word or two ("Hello?") and wait for the caller; a machine plays a
// long greeting, often ending in a steady beep. So: a steady tone is a machine; speech that goes
// on past what a person says before pausing is a machine; a short greeting followed by silence is
// a person; silence from the start is a person who waits (the agent speaks first). After a
// machine, the message may start at the end of its beep, or after a long silence when it has none.
// Words (PocketSphinx) are not used: its error rate makes "leave a message" too rare a catch.
import { type DetectedTone, ToneTracker } from "../../codecs/tone.ts";

/** The figures the rules use, ms (docs/outbound.md, answering-machine detection). */
export interface AmdTiming {
  /** Speech longer than this before a pause is a machine's greeting. */
  readonly maxHumanGreetingMs: number;
  /** Silence after a short greeting that says a person is waiting. */
  readonly humanSilenceMs: number;
  /** Nothing said for this long after the answer: a person waiting for us. */
  readonly initialSilenceMs: number;
  /** A machine without a beep: silence this long after its greeting ends it. */
  readonly machineSilenceMs: number;
  /** Longest wait for a machine's beep or silence, from the answer. */
  readonly maxWaitMs: number;
}

export const DEFAULT_AMD_TIMING: AmdTiming = {
  maxHumanGreetingMs: 2000,
  humanSilenceMs: 800,
  initialSilenceMs: 4000,
  machineSilenceMs: 2000,
  maxWaitMs: 30_000,
};

export type AmdEvent =
  | { kind: "decided"; result: "human" | "machine"; atMs: number; why: string }
  /** A machine's greeting is over (its beep ended, or silence): a message may start now. */
  | { kind: "message-cue"; atMs: number; beep?: DetectedTone; why: string };

/** Quietest speech frame, RMS in Int16 units (about −42 dBFS), and how far above the floor. */
const MIN_SPEECH_RMS = 260;
const ABOVE_FLOOR = 3.5;

export class AnsweringMachineDetector {
  readonly #tones: ToneTracker;
  readonly #t: AmdTiming;
  #now = 0;
  #floor = MIN_SPEECH_RMS / ABOVE_FLOOR;
  #speechMs = 0;
  #firstSpeech = -1;
  #lastSpeechEnd = -1;
  #decided: "human" | "machine" | undefined;
  #cued = false;
  #beep: DetectedTone | undefined;

  constructor(sampleRate: number, timing: AmdTiming = DEFAULT_AMD_TIMING) {
    this.#tones = new ToneTracker({ sampleRate });
    this.#t = timing;
  }

  get decided(): "human" | "machine" | undefined {
    return this.#decided;
  }

  /** The beep the machine played, once heard. */
  get beep(): DetectedTone | undefined {
    return this.#beep;
  }

  /** One inbound frame (in order from the answer; a gap in frames is time that passed silently). */
  push(frame: Int16Array, frameMs: number): AmdEvent[] {
    const at = this.#now;
    this.#now += frameMs;
    const ended = this.#tones.push(frame, at, frameMs);
    if (ended && !this.#beep) this.#beep = ended;
    const rms = this.#tones.last.rms;
    const speech = !this.#tones.tonal && rms >= Math.max(MIN_SPEECH_RMS, this.#floor * ABOVE_FLOOR);
    // The floor follows the line's noise: down at once, up slowly (the quiet within words must not lift it).
    if (!speech && !this.#tones.tonal)
      this.#floor = rms < this.#floor ? rms : this.#floor + 0.005 * (rms - this.#floor);
    if (speech) {
      this.#speechMs += frameMs;
      if (this.#firstSpeech < 0) this.#firstSpeech = at;
      this.#lastSpeechEnd = at + frameMs;
    } else if (this.#tones.tonal) this.#lastSpeechEnd = at + frameMs; // a beep is not silence
    return this.#rules(speech);
  }

  /** Time passing with no frames at all (a silent RTP gap): counted as silence. */
  silence(ms: number): AmdEvent[] {
    this.#now += ms;
    return this.#rules(false);
  }

  #rules(speaking: boolean): AmdEvent[] {
    const out: AmdEvent[] = [];
    const now = this.#now;
    const t = this.#t;
    const quietFor = this.#lastSpeechEnd < 0 ? now : now - this.#lastSpeechEnd;
    if (!this.#decided) {
      let why: string | undefined;
      let result: "human" | "machine" = "machine";
      if (this.#beep || this.#tones.sounding) why = "a beep";
      else if (this.#speechMs > t.maxHumanGreetingMs)
        why = `a greeting longer than ${t.maxHumanGreetingMs} ms`;
      else if (this.#firstSpeech >= 0 && !speaking && quietFor >= t.humanSilenceMs) {
        result = "human";
        why = `a short greeting (${this.#speechMs} ms) then silence`;
      } else if (this.#firstSpeech < 0 && now >= t.initialSilenceMs) {
        result = "human";
        why = "silence: someone waiting for us to speak";
      } else if (now >= t.maxWaitMs) why = "no decision within the longest wait";
      if (why) {
        this.#decided = result;
        out.push({ kind: "decided", result, atMs: now, why });
      }
    }
    if (this.#decided === "machine" && !this.#cued) {
      if (this.#beep) {
        this.#cued = true;
        out.push({ kind: "message-cue", atMs: now, beep: this.#beep, why: "after the beep" });
      } else if (!this.#tones.sounding && !speaking && quietFor >= t.machineSilenceMs) {
        this.#cued = true;
        out.push({ kind: "message-cue", atMs: now, why: "silence after the greeting (no beep)" });
      } else if (now >= t.maxWaitMs) {
        this.#cued = true;
        out.push({ kind: "message-cue", atMs: now, why: "no beep or silence within the longest wait" });
      }
    }
    return out;
  }
}
