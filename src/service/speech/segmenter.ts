// Sentence segmentation of streamed text (E5). Text arrives in pieces (for LLM output, token by
// token); a sentence is released as soon as the accumulated text is known to hold one, so its
// audio can start while the rest is still being written.
//
// - `sentence` mode: cuts after . ! ? ; … (and CJK 。！？；) and at line breaks.
// - `default` mode: the same, and in addition long runs without a sentence end are cut at a clause
//   mark (, : 、，：) once they pass CLAUSE_CHARS, or at a space past FORCE_CHARS, so a long LLM
//   sentence does not hold the audio back.
// A terminator at the very end of the text so far counts when it cannot be the middle of something
// else: "!" and "?" always, "." unless it follows a digit ("3.14") or an abbreviation ("Dr.").
// Nothing is cut inside an unclosed (…) instruction.
import { openInstructionAt } from "./instructions.ts";

export type SegmentMode = "default" | "sentence";

const CLAUSE_CHARS = 100;
const FORCE_CHARS = 250;
const CLOSERS = `"'”’)]}»」』`;
const ABBREVIATIONS = new Set([
  "mr",
  "mrs",
  "ms",
  "dr",
  "prof",
  "sr",
  "jr",
  "st",
  "vs",
  "etc",
  "e.g",
  "i.e",
  "no",
  "approx",
  "dept",
  "inc",
  "ltd",
  "co",
  "mt",
  "ft",
]);

function isSpace(c: string | undefined): boolean {
  return c !== undefined && /\s/.test(c);
}

/** Whether a "." at index i ends a sentence, given the character after it (undefined: not seen yet). */
function periodEnds(text: string, i: number, next: string | undefined): boolean {
  if (next !== undefined && !isSpace(next)) return false;
  const before = text[i - 1];
  if (before === undefined) return false;
  if (/\d/.test(before)) return next !== undefined; // "3." may continue as "3.14"
  const word = /([\p{L}.]+)$/u.exec(text.slice(0, i))?.[1] ?? "";
  if (ABBREVIATIONS.has(word.toLowerCase())) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // initials: "J. Smith", "U.S."
  if (/^(\p{L}\.)+\p{L}$/u.test(word)) return false;
  return true;
}

/** End (exclusive) of the first complete sentence in text, or -1. */
function sentenceEnd(text: string, limit: number): number {
  let depth = 0;
  for (let i = 0; i < limit; i++) {
    const c = text[i]!;
    let ends = false;
    if (c === "(" || c === "（") depth++;
    else if ((c === ")" || c === "）") && depth > 0) depth--;
    if (depth > 0) continue; // an instruction is never cut
    if (c === "\n") ends = i > 0;
    else if ("。！？；…".includes(c)) ends = true;
    else if (c === "!" || c === "?" || c === ";")
      ends = text[i + 1] === undefined || isSpace(text[i + 1]) || CLOSERS.includes(text[i + 1]!);
    else if (c === ".") {
      let j = i + 1;
      while (j < text.length && (text[j] === "." || CLOSERS.includes(text[j]!))) j++;
      ends = periodEnds(text, i, text[j]);
      if (ends) i = j - 1;
    }
    if (ends) {
      let j = i + 1;
      while (j < text.length && CLOSERS.includes(text[j]!)) j++;
      return j;
    }
  }
  return -1;
}

export class SentenceSegmenter {
  private buf = "";
  private readonly mode: SegmentMode;

  constructor(mode: SegmentMode) {
    this.mode = mode;
  }

  /** Text received and not yet released. */
  get pending(): string {
    return this.buf;
  }

  /** Adds text; returns the sentences it completes (trimmed, never empty). */
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    for (;;) {
      const open = openInstructionAt(this.buf);
      const limit = open >= 0 ? open : this.buf.length;
      let end = sentenceEnd(this.buf, limit);
      if (end < 0 && this.mode === "default") end = this.clauseEnd(limit);
      if (end < 0) break;
      const sentence = this.buf.slice(0, end).trim();
      this.buf = this.buf.slice(end).replace(/^\s+/, "");
      if (sentence) out.push(sentence);
    }
    return out;
  }

  private clauseEnd(limit: number): number {
    if (limit < CLAUSE_CHARS) return -1;
    const head = this.buf.slice(0, limit);
    const clause = Math.max(...[", ", ": ", "，", "、", "："].map((m) => head.lastIndexOf(m)));
    if (clause >= CLAUSE_CHARS / 2) return clause + 1;
    if (limit < FORCE_CHARS) return -1;
    const space = head.lastIndexOf(" ");
    return space > 0 ? space : limit;
  }

  /** Releases whatever is buffered (flush, done, idle end). */
  flush(): string {
    const rest = this.buf.trim();
    this.buf = "";
    return rest;
  }
}
