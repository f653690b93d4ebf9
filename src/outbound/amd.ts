// Answering-machine detection from the first seconds after the answer, on physical grounds:
// people answer with a short word or two ("Hello?") and wait for the caller; a machine plays a
// long greeting, often ending in a steady beep. So: a steady tone is a machine; speech that goes
// on past what a person says before pausing is a machine; a short greeting followed by silence is
// a person; silence from the start is a person who waits (the agent speaks first). After a
// machine, the message may start at the end of its beep, or after a long silence when it has none.
// Words (PocketSphinx) are not used: its error rate makes "leave a message" too rare a catch.
// Early media (audio before the answer: ringback, a carrier's announcement, a voicemail that plays
// its greeting before answering) is heard but never decides: the rules' clock starts at the
// answer. What it showed carries over only when it runs into the answer: a greeting still being
// spoken counts toward the greeting's length, and a beep that followed a greeting (ringback and
// announcements' tones follow no greeting) is the machine's beep, with its times before the answer.
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

/** Early speech carries over when it was still going this close to the answer, ms. */
const CARRY_GAP_MS = 300;
/** A beep in early media counts when it ended this close to the answer, ms. */
const BEEP_CARRY_MS = 3000;
/** Speech before a tone that makes the tone a greeting's beep, ms (ringback follows none). */
const GREETING_BEFORE_BEEP_MS = 600;
/** Speech after a beep that says it was not the greeting's last, ms. */
const SPEECH_AFTER_BEEP_MS = 300;
/**
 * Call-progress tones in early media (ringback is often two tones, 440+480 Hz, 400+450 Hz, which a
 * 20 ms frame cannot tell apart and so are not "pure" enough to be a beep, yet are not speech): a
 * frame whose strongest pitch holds this share of its energy, at the pitch of the frame before,
 * for this many frames in a row. Speech's share stays mostly below it and its pitch moves.
 */
const PROGRESS_PURITY = 0.4;
const PROGRESS_FRAMES = 5;
const PROGRESS_MIN_RMS = 150;

/** What early media left for the answer (for logs and the record). */
export interface EarlyEvidence {
  /** Early media heard, ms. */
  readonly ms: number;
  /** Speech of a greeting running into the answer, ms. */
  readonly greetingMs: number;
  /** A beep after a greeting, times relative to the answer (negative: before it). */
  readonly beep?: DetectedTone;
}

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
  /** Early media: its length (the answer's place on the tone tracker's timeline), greeting run and beep. */
  #earlyMs = 0;
  #earlyRunMs = 0;
  #earlyLastSpeech = -1;
  #earlyBeep: DetectedTone | undefined;
  #speechAfterBeep = 0;
  /** The steady tone under way in early media: frames so far, its pitch, speech counted in it. */
  #progressFrames = 0;
  #progressHz = 0;
  #progressSpeechMs = 0;
  /** The greeting's speech before the tone under way (a beep follows a greeting, ringback none). */
  #greetingBeforeTone = 0;
  /** A tone sounding across the answer may be the beep (it followed a greeting). */
  #toneAcrossAnswer = false;
  #evidence: EarlyEvidence | undefined;

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

  /** Early media heard so far, ms. */
  get earlyMs(): number {
    return this.#earlyMs;
  }

  /** What early media carried into the answer (once answered). */
  get early(): EarlyEvidence | undefined {
    return this.#evidence;
  }

  /**
   * One frame of early media (before the answer): evidence only, nothing decided. Frames come in
   * order, before the first `push` or `silence` (later ones are ignored).
   */
  hearEarly(frame: Int16Array, frameMs: number): void {
    // Frames still in flight when the answer came are the call's, not early media.
    if (this.#evidence) return;
    const at = this.#earlyMs;
    this.#earlyMs += frameMs;
    const { speech, ended } = this.#classify(frame, at, frameMs);
    const t = this.#tones.last;
    const steady =
      t.rms >= PROGRESS_MIN_RMS && t.purity >= PROGRESS_PURITY && Math.abs(t.hz - this.#progressHz) <= 50;
    this.#progressHz = t.hz;
    if (!steady) {
      this.#progressFrames = 0;
      this.#progressSpeechMs = 0;
    } else if (++this.#progressFrames === PROGRESS_FRAMES) {
      // A tone began (ringback, a beep): the greeting run before it is over, what it counted was no speech.
      this.#greetingBeforeTone = this.#earlyRunMs - this.#progressSpeechMs;
      this.#earlyRunMs = 0;
      this.#earlyLastSpeech = -1;
    }
    if (ended) {
      // A tone after a greeting may be its beep; after ringback, silence or another tone it is not.
      this.#earlyBeep = this.#greetingBeforeTone >= GREETING_BEFORE_BEEP_MS ? ended : undefined;
      this.#speechAfterBeep = 0;
    }
    if (!speech) return;
    if (this.#progressFrames >= PROGRESS_FRAMES) return;
    if (steady) this.#progressSpeechMs += frameMs;
    this.#earlyRunMs += frameMs;
    this.#earlyLastSpeech = at + frameMs;
    if (!this.#earlyBeep) return;
    this.#speechAfterBeep += frameMs;
    if (this.#speechAfterBeep >= SPEECH_AFTER_BEEP_MS) this.#earlyBeep = undefined;
  }

  /** The answer: early media's evidence placed on the answer's timeline (negative: before it). */
  #answer(): void {
    if (this.#evidence) return;
    const end = this.#earlyMs;
    const beep =
      this.#earlyBeep && end - this.#earlyBeep.endMs <= BEEP_CARRY_MS
        ? { ...this.#earlyBeep, startMs: this.#earlyBeep.startMs - end, endMs: this.#earlyBeep.endMs - end }
        : undefined;
    const running = this.#earlyLastSpeech >= 0 && end - this.#earlyLastSpeech <= CARRY_GAP_MS;
    const greetingMs = !beep && running ? this.#earlyRunMs : 0;
    if (beep) this.#beep = beep;
    this.#toneAcrossAnswer =
      this.#progressFrames >= PROGRESS_FRAMES && this.#greetingBeforeTone >= GREETING_BEFORE_BEEP_MS;
    if (greetingMs > 0) {
      this.#speechMs = greetingMs;
      this.#lastSpeechEnd = this.#earlyLastSpeech - end;
    }
    this.#evidence = { ms: end, greetingMs, ...(beep ? { beep } : {}) };
  }

  /** Speech or not, and the tone that ended, for a frame at `at` on the tone tracker's timeline. */
  #classify(frame: Int16Array, at: number, frameMs: number): { speech: boolean; ended?: DetectedTone } {
    const ended = this.#tones.push(frame, at, frameMs);
    const rms = this.#tones.last.rms;
    const speech = !this.#tones.tonal && rms >= Math.max(MIN_SPEECH_RMS, this.#floor * ABOVE_FLOOR);
    // The floor follows the line's noise: down at once, up slowly (the quiet within words must not lift it).
    if (!speech && !this.#tones.tonal)
      this.#floor = rms < this.#floor ? rms : this.#floor + 0.005 * (rms - this.#floor);
    return ended ? { speech, ended } : { speech };
  }

  /** One inbound frame (in order from the answer; a gap in frames is time that passed silently). */
  push(frame: Int16Array, frameMs: number): AmdEvent[] {
    this.#answer();
    const at = this.#now;
    this.#now += frameMs;
    // The tone tracker's timeline runs on from the early media's: a tone may span the answer.
    const off = this.#earlyMs;
    const c = this.#classify(frame, at + off, frameMs);
    const speech = c.speech;
    if (c.ended && !this.#beep && this.#ownTone(c.ended.startMs))
      this.#beep = { ...c.ended, startMs: c.ended.startMs - off, endMs: c.ended.endMs - off };
    if (speech) {
      this.#speechMs += frameMs;
      if (this.#firstSpeech < 0) this.#firstSpeech = at;
      this.#lastSpeechEnd = at + frameMs;
    } else if (this.#tones.tonal) this.#lastSpeechEnd = at + frameMs; // a beep is not silence
    return this.#rules(speech);
  }

  /** A tone begun after the answer, or in early media after a greeting (ringback running into the answer is not a beep). */
  #ownTone(startOnTracker: number): boolean {
    return startOnTracker >= this.#earlyMs || this.#toneAcrossAnswer;
  }

  /** Time passing with no frames at all (a silent RTP gap): counted as silence. */
  silence(ms: number): AmdEvent[] {
    this.#answer();
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
      if (this.#beep || (this.#tones.sounding && this.#ownTone(this.#tones.runStartMs)))
        why = this.#beep && this.#beep.endMs <= 0 ? "a beep heard in early media" : "a beep";
      else if (this.#speechMs > t.maxHumanGreetingMs && this.#evidence?.greetingMs)
        why = `a greeting longer than ${t.maxHumanGreetingMs} ms (begun in early media)`;
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
