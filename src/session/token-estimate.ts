// Tokens of chat text, estimated without a tokenizer's tables. The history's budget (history.ts)
// needs a count close to what chat models see, not an exact one: the bridge cannot know the
// hosted model's tokenizer anyway. Holding o200k's ranks for it cost every bridge ~20 MB of live
// heap (200,000 strings and their map), which each full garbage collection marks: on a busy
// machine ~40 ms more per collection, on the thread that carries the calls' audio.
//
// The estimate follows how BPE tokenizers of that family split text: a run of letters is one
// token per 6 letters begun (most English words are one token), a run of digits one per 3, each
// other visible character one, and whitespace joins the next piece. On the project's English
// texts it counts 11 % more than o200k, and never fewer: a budget it keeps is kept.

const PIECE = /(\p{L}+)|(\p{N}+)|(\S)/gu;
const LETTERS_PER_TOKEN = 6;
const DIGITS_PER_TOKEN = 3;

function pieceTokens(m: RegExpMatchArray): number {
  if (m[1]) return Math.ceil(m[1].length / LETTERS_PER_TOKEN);
  if (m[2]) return Math.ceil(m[2].length / DIGITS_PER_TOKEN);
  return 1;
}

export function estimateTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(PIECE)) n += pieceTokens(m);
  return n;
}

/** The longest prefix of `text` within `maxTokens` (whole pieces), marked as cut with "…". */
export function clipTokens(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text;
  let n = 0;
  for (const m of text.matchAll(PIECE)) {
    n += pieceTokens(m);
    // One token is kept for the mark.
    if (n > maxTokens - 1) return `${text.slice(0, m.index).trimEnd()}…`;
  }
  return text;
}
