// Whether a (preemptively recognized) utterance sounds finished. Silence alone cannot tell
// a mid-sentence pause from the end of a turn, so the transcript decides how long to wait:
// a complete-sounding one ends the turn after the short silence, a trailing conjunction,
// article or filler waits for the long one.
import type { Clock, TimerHandle } from "./clock.ts";
import type { TurnTakingConfig } from "./config.ts";

// biome-ignore format: a word list reads best as a block
const CONTINUATIONS = new Set([
  "and", "but", "or", "so", "because", "cause", "then", "if", "when", "while", "that", "which", "who",
  "the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "these", "those",
  "to", "of", "for", "with", "from", "in", "on", "at", "by", "about", "into", "like",
  "is", "are", "was", "were", "be", "am", "i", "we", "it's", "i'm", "i'd", "we're",
  "um", "uh", "er", "erm", "hmm", "mm", "well", "also", "plus", "maybe", "just",
  "want", "need", "would", "could", "should", "can", "will", "wanted", "trying", "number",
]);

/** "...can you", "...do you" wait for more; "thank you", "...find you" are complete. */
// biome-ignore format: a word list reads best as a block
const ASKING_YOU = new Set([
  "can", "could", "would", "will", "do", "did", "are", "were", "if", "have", "tell", "give", "let", "help",
]);

/** True when the text ends the way an unfinished sentence does. Empty text counts as unfinished. */
export function soundsUnfinished(text: string): boolean {
  const trimmed = text.trim().toLowerCase();
  if (!trimmed) return true;
  if (/[,;:-]$/.test(trimmed)) return true;
  if (/[.?!]$/.test(trimmed)) return false;
  const words = trimmed.split(/\s+/).map((w) => w.replace(/[^a-z']/g, ""));
  const last = words.at(-1) ?? "";
  if (last === "you") return ASKING_YOU.has(words.at(-2) ?? "");
  return CONTINUATIONS.has(last);
}

/** How long an undecided onset may hold a confirmed end of turn back: longer than any VAD verdict. */
const ONSET_WAIT_MAX_MS = 300;
/** How often a held end of turn looks again whether the onset became speech or died away. */
const ONSET_RECHECK_MS = 20;

export interface TurnEndHost {
  /** Someone is speaking: their speech decides what becomes of the turn, not this wait. */
  speaking(): boolean;
  /** Sound the VAD has not yet called speech: the caller may be going on. */
  onsetPending(): boolean;
  /** The caller's turn is over. */
  confirm(): void;
}

/**
 * The wait after one utterance before its turn is confirmed: the short wait if its words sound
 * finished, the long one whatever they sound like, and never while the caller audibly starts again.
 */
export class TurnEndWait {
  readonly #clock: Clock;
  readonly #host: TurnEndHost;
  #minTimer: TimerHandle | undefined;
  #maxTimer: TimerHandle | undefined;
  #minElapsed = false;
  #text: string | undefined;
  #failed = false;
  #done = false;
  /** When confirming was first put off because the caller seemed to be starting again. */
  #onsetWaitFrom: number | undefined;

  /** Starts waiting for the utterance that ended at clock time `speechEndAt`. */
  constructor(clock: Clock, turn: TurnTakingConfig, speechEndAt: number, host: TurnEndHost) {
    this.#clock = clock;
    this.#host = host;
    const since = clock.now() - speechEndAt;
    this.#minTimer = clock.setTimeout(() => {
      this.#minElapsed = true;
      this.#maybeConfirm();
    }, turn.minEndOfTurnMs - since);
    this.#maxTimer = clock.setTimeout(() => this.#confirm(), turn.maxEndOfTurnMs - since);
  }

  /** The utterance's words (or the failure to get them). */
  recognized(text: string, failed: boolean): void {
    this.#text = text;
    this.#failed = failed;
    this.#maybeConfirm();
  }

  /** The caller went on, or the call ended: no confirmation. */
  cancel(): void {
    this.#done = true;
    this.#clock.clearTimeout(this.#minTimer);
    this.#clock.clearTimeout(this.#maxTimer);
  }

  /** At the short wait, confirm if the words sound finished; else wait for the long one. */
  #maybeConfirm(): void {
    if (this.#done || !this.#minElapsed || this.#text === undefined) return;
    if (this.#failed || !soundsUnfinished(this.#text)) this.#confirm();
  }

  #confirm(): void {
    const clock = this.#clock;
    clock.clearTimeout(this.#minTimer);
    clock.clearTimeout(this.#maxTimer);
    if (this.#done || this.#host.speaking()) return;
    if (this.#host.onsetPending()) {
      // The caller may be going on: sound is arriving that the VAD has not yet called speech (it
      // does so only 100–150 ms after the onset). Answering now would talk over them, so wait for
      // the VAD's verdict: speech-start drops this turn, anything else confirms it.
      this.#onsetWaitFrom ??= clock.now();
      if (clock.now() - this.#onsetWaitFrom < ONSET_WAIT_MAX_MS) {
        this.#maxTimer = clock.setTimeout(() => this.#confirm(), ONSET_RECHECK_MS);
        return;
      }
    }
    this.#done = true;
    this.#host.confirm();
  }
}
