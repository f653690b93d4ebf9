// A reply taken up again after its stream failed: the caller already has `said` (sent to speech),
// so of a new stream only what goes beyond it may be spoken. A new request for the same
// conversation often starts with the same words (always so on a deterministic model): they are
// skipped. When it says something else, the model is asked to continue `said` instead.
import type { ChatMessage } from "../../api/types/index.ts";

export type PrefixMatch =
  /** The text so far is all within `said`: read more before deciding. */
  | { kind: "more" }
  /** The text leaves `said` before its end: it is another wording. */
  | { kind: "diverged" }
  /** The text covers `said`; `rest` is what it says beyond. */
  | { kind: "rest"; rest: string };

const space = /\s/;

/** Compares `text` with `said`, ignoring case, leading space and how the words are spaced. */
export function afterPrefix(said: string, text: string): PrefixMatch {
  const want = said.toLowerCase().replace(/\s+/g, " ").trim();
  let i = 0;
  let lastSpace = true; // leading space of `text` is skipped
  for (let j = 0; j < text.length; j++) {
    if (i === want.length) return { kind: "rest", rest: text.slice(j) };
    const c = text[j]!;
    let n: string;
    if (space.test(c)) {
      if (lastSpace) continue;
      lastSpace = true;
      n = " ";
    } else {
      lastSpace = false;
      n = c.toLowerCase();
    }
    if (want[i] !== n) return { kind: "diverged" };
    i++;
  }
  return i === want.length ? { kind: "rest", rest: "" } : { kind: "more" };
}

/**
 * The request that asks the model to go on from `said`: the conversation, the cut reply as the
 * assistant's, and an instruction. A trailing assistant message alone is not a continuation on
 * every OpenAI-compatible service (most start a new reply after it), so the instruction says it;
 * a system message, so it is not mistaken for the caller's words.
 */
export function continuationMessages(messages: readonly ChatMessage[], said: string): ChatMessage[] {
  return [
    ...messages,
    { role: "assistant", content: said },
    {
      role: "system",
      content:
        "Your reply above was cut off. Continue it from exactly where it stopped, without repeating any of it and without mentioning the interruption.",
    },
  ];
}

/** `next` appended to `said`: a space between two words the model left unspaced. */
export function joinText(said: string, next: string): string {
  if (!said || !next || space.test(said.at(-1)!) || space.test(next[0]!)) return next;
  return /^[\p{L}\p{N}]/u.test(next) ? ` ${next}` : next;
}
