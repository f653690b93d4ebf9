// The person's spoken answer to a warm transfer's question (#56): what they say after the brief is
// cut into utterances by the session's voice detector, recognized by the same E6 recognizer as the
// caller's turns, and read as yes or no. The keypad (1 or 2) works alongside: whichever comes first
// decides. A reading errs toward no: a wrong "no" brings the caller back to the agent, a wrong "yes"
// joins them to someone who did not want the call.
import { concatPcm } from "../../codecs/pcm.ts";
import { Resampler } from "../../codecs/resample.ts";
import type { Logger } from "../core/log.ts";
import type { Recognizer } from "./services.ts";
import type { SpeechDetector, SpeechDetectorFactory, SpeechEvent } from "./speech-detector.ts";

export type PersonAnswer = "accept" | "decline";

/** Said yes in words that hold a no ("no problem"): read before the noes. */
const YES_DESPITE_NO = ["no problem", "no worries", "not a problem", "why not"];
const NO = [
  "no",
  "nope",
  "nah",
  "not",
  "not now",
  "decline",
  "declined",
  "reject",
  "cant",
  "can't",
  "cannot",
  "dont",
  "don't",
  "unable",
  "busy",
  "later",
  "sorry",
];
const YES = [
  "yes",
  "yeah",
  "yep",
  "yup",
  "sure",
  "okay",
  "ok",
  "alright",
  "all right",
  "fine",
  "accept",
  "certainly",
  "absolutely",
  "of course",
  "go ahead",
  "please do",
  "put them through",
  "put him through",
  "put her through",
  "put it through",
  "connect",
  "connect them",
  "take it",
];

/** Yes or no in what the person said; undefined when it is neither ("hello?", "who is it?"). */
export function readAnswer(words: string): PersonAnswer | undefined {
  let text = ` ${words
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z' ]+/g, " ")
    .replace(/\s+/g, " ")
    .trim()} `;
  let yes = false;
  for (const phrase of YES_DESPITE_NO)
    if (text.includes(` ${phrase} `)) {
      yes = true;
      text = text.replaceAll(` ${phrase} `, " ");
    }
  if (NO.some((p) => text.includes(` ${p} `))) return "decline";
  if (yes || YES.some((p) => text.includes(` ${p} `))) return "accept";
  return undefined;
}

/** The detector and the recognizer work at this rate (as the caller's turns do). */
const RATE = 16_000;
/** Audio kept before the detector's speech start: it reports the start a little late. */
const PRE_ROLL_MS = 300;
/** Audio kept after its speech end. */
const TAIL_MS = 150;
/** The person's latest audio held, ms. */
const KEEP_MS = 10_000;

export interface PersonEarDeps {
  /** The person's leg's input rate. */
  rate: number;
  recognizer: Recognizer;
  createDetector: SpeechDetectorFactory;
  log: Logger;
  /** Yes or no was heard, in these words. */
  answered(answer: PersonAnswer, words: string): void;
}

/** Listens to the person's leg for a spoken yes or no. */
export class PersonEar {
  readonly #d: PersonEarDeps;
  readonly #abort = new AbortController();
  readonly #vad: SpeechDetector;
  readonly #up: Resampler | undefined;
  /** The latest audio at RATE, each piece with its stream position, ms. */
  #pieces: { atMs: number; pcm: Int16Array }[] = [];
  #posMs = 0;
  #speechAtMs: number | undefined;
  #closed = false;

  constructor(deps: PersonEarDeps) {
    this.#d = deps;
    this.#up = deps.rate === RATE ? undefined : new Resampler(deps.rate, RATE);
    this.#vad = deps.createDetector((e) => this.#onSpeech(e));
  }

  push(frame: Int16Array): void {
    if (this.#closed) return;
    const pcm = this.#up ? this.#up.push(frame) : frame.slice();
    if (!pcm.length) return;
    this.#pieces.push({ atMs: this.#posMs, pcm });
    this.#posMs += (pcm.length * 1000) / RATE;
    // A longer utterance is cut to its last KEEP_MS: a yes or a no is short.
    const keepFrom = this.#posMs - KEEP_MS;
    while (this.#pieces.length > 1 && this.#pieces[1]!.atMs <= keepFrom) this.#pieces.shift();
    this.#vad.push(pcm);
  }

  /** The decision was made (or the transfer is over): recognitions under way are dropped. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#abort.abort();
    this.#vad.close();
    this.#pieces = [];
  }

  #onSpeech(e: SpeechEvent): void {
    if (this.#closed) return;
    if (e.type === "speech-start") {
      this.#speechAtMs = e.atMs;
      return;
    }
    const from = (this.#speechAtMs ?? e.atMs) - PRE_ROLL_MS;
    this.#speechAtMs = undefined;
    const pcm = this.#cut(from, e.atMs + TAIL_MS);
    if (pcm.length) void this.#recognize(pcm);
  }

  /** The audio held between two stream positions. */
  #cut(fromMs: number, toMs: number): Int16Array {
    const parts: Int16Array[] = [];
    for (const { atMs, pcm } of this.#pieces) {
      const endMs = atMs + (pcm.length * 1000) / RATE;
      if (endMs <= fromMs || atMs >= toMs) continue;
      const a = Math.max(0, Math.round(((fromMs - atMs) * RATE) / 1000));
      const b = Math.min(pcm.length, Math.round(((toMs - atMs) * RATE) / 1000));
      parts.push(pcm.subarray(a, b));
    }
    return concatPcm(parts);
  }

  async #recognize(pcm: Int16Array): Promise<void> {
    const { log } = this.#d;
    try {
      const words = await this.#d.recognizer.recognize(pcm, RATE, this.#abort.signal);
      if (this.#closed) return;
      const answer = readAnswer(words);
      log.info({ words, answer: answer ?? "neither" }, "warm transfer: the person said");
      if (answer) this.#d.answered(answer, words);
    } catch (err) {
      if (!this.#closed)
        log.warn({ err: (err as Error).message }, "warm transfer: the person's words not recognized");
    }
  }
}
