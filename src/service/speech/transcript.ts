// Turns the recognizer's word stream into E6 transcript pieces: inverse text normalization over the
// words so far, releasing a token only once no later word can change it (a trailing "twenty" may
// still become "twenty five" → "25").
import { inverseNormalize, mayContinueNumber } from "../engines/asr/itn.ts";
import type { RecognizedWord } from "../engines/asr/sphinx-engine.ts";

export interface TranscriptPiece {
  text: string;
  startMs: number;
  endMs: number;
}

export class TranscriptBuilder {
  private readonly words: RecognizedWord[] = [];
  private readonly itn: boolean;
  private released = 0;

  constructor(itn: boolean) {
    this.itn = itn;
  }

  /** Adds words; returns the pieces now settled. */
  add(words: readonly RecognizedWord[], final: boolean): TranscriptPiece[] {
    this.words.push(...words);
    let usable = this.words.length;
    if (!final && this.itn) {
      while (usable > this.released && mayContinueNumber(this.words[usable - 1]!.word)) usable--;
    }
    const pieces: TranscriptPiece[] = [];
    const tokens = this.itn
      ? inverseNormalize(this.words.slice(0, usable).map((w) => w.word))
      : this.words.slice(0, usable).map((w, i) => ({ text: w.word, from: i, to: i + 1 }));
    for (const t of tokens) {
      if (t.from < this.released) continue;
      pieces.push({ text: t.text, startMs: this.words[t.from]!.startMs, endMs: this.words[t.to - 1]!.endMs });
      this.released = t.to;
    }
    return pieces;
  }
}

/** The complete transcript of a final word list. */
export function transcriptText(words: readonly RecognizedWord[], itn: boolean): string {
  const list = words.map((w) => w.word);
  return (itn ? inverseNormalize(list).map((t) => t.text) : list).join(" ");
}
