// How likely the caller's words so far are a complete turn, asked of a language model: the
// probability it gives the end of the sentence right after them. The published turn detectors
// ask a chat model the same question (the probability of its end-of-turn token); here it is
// the recognizer's own English trigram model, which holds P(</s> | last two words) learned
// from a large corpus and is already installed. Any other model can stand in behind the
// interface (a chat model asked over the service, later).
import { readFile } from "node:fs/promises";
import type { Logger } from "../core/log.ts";
import { TrigramLm } from "./trigram-lm.ts";

export interface TurnCompletionModel {
  /**
   * P(the sentence ends after `words`), or undefined when the model cannot say (not loaded yet,
   * or no word it knows). A model that must ask a server returns a promise.
   */
  endProbability(words: string): number | undefined | Promise<number | undefined>;
}

// biome-ignore format: a table reads best as a block
const DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];

/**
 * The transcript as the model's words: lower case, no punctuation but apostrophes. A number
 * (the service writes spoken numbers as digits) stands as its last digit's word, so "…is 4567"
 * ends the way "…is four five six seven" does.
 */
export function lmWords(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.toLowerCase().split(/\s+/)) {
    const w = raw.replace(/[^a-z0-9']/g, "").replace(/^'+|'+$/g, "");
    if (!w) continue;
    const digits = w.match(/\d/g);
    out.push(digits ? DIGITS[Number(digits.at(-1))]! : w);
  }
  return out;
}

export class TrigramTurnCompletion implements TurnCompletionModel {
  readonly #lm: TrigramLm;
  readonly #start: number;

  constructor(lm: TrigramLm) {
    this.#lm = lm;
    this.#start = lm.id("<s>") ?? -1;
  }

  endProbability(words: string): number | undefined {
    const lm = this.#lm;
    // The history the model sees: the last words it knows, back to the first unknown one (an
    // unknown word is a context the model has no statistics for) or the start of the turn.
    const history: number[] = [];
    const list = lmWords(words);
    let i = list.length - 1;
    for (; i >= 0 && history.length < lm.order - 1; i--) {
      const id = lm.id(list[i]!);
      if (id === undefined) break;
      history.unshift(id);
    }
    if (history.length === 0) return undefined;
    if (i < 0 && history.length < lm.order - 1 && this.#start >= 0) history.unshift(this.#start);
    return 10 ** lm.logProbEnd(history);
  }
}

const loaded = new Map<string, Promise<TrigramLm | undefined>>();

/**
 * The trigram model at `path`, shared by every call of the process and loaded on first use, off
 * the call path: until it has loaded (~0.2 s; one file read and its word list), or if it cannot
 * be, endProbability() answers undefined and turns end on silence alone.
 */
export function sharedTrigramCompletion(path: string, log?: Logger): TurnCompletionModel {
  let model: TrigramTurnCompletion | undefined;
  let pending = loaded.get(path);
  if (!pending) {
    pending = readFile(path)
      .then((buf) => new TrigramLm(buf))
      .catch((err: Error) => {
        log?.warn({ path, err: err.message }, "end-of-turn language model not loaded: silence alone decides");
        return undefined;
      });
    loaded.set(path, pending);
  }
  void pending.then((lm) => {
    if (lm) model = new TrigramTurnCompletion(lm);
  });
  return { endProbability: (words) => model?.endProbability(words) };
}

/**
 * The model a call weighs its words with: the services' own, else the trigram model of
 * `turn.endOfTurnLm`; none when the words do not count (a weight of 0 loads no model).
 */
export function turnCompletionFor(
  turn: { endOfTurnLm: string | undefined; endOfTurnLmWeight: number },
  own: TurnCompletionModel | undefined,
  log: Logger,
): TurnCompletionModel | undefined {
  if (turn.endOfTurnLmWeight <= 0) return undefined;
  return own ?? (turn.endOfTurnLm ? sharedTrigramCompletion(turn.endOfTurnLm, log) : undefined);
}
