// Inverse text normalization for English transcripts: spoken numbers become digits ("one hundred
// twenty three" → "123", "four five six" → "456", "three point five" → "3.5", "twenty first" →
// "21st"). Works on word lists so that streamed deltas and word timestamps survive it: each output
// token says which input words it covers.

const UNITS: Readonly<Record<string, number>> = {
  zero: 0,
  oh: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
};
const TENS: Readonly<Record<string, number>> = {
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};
const SCALES: Readonly<Record<string, number>> = { hundred: 100, thousand: 1000, million: 1e6, billion: 1e9 };
const ORDINALS: Readonly<Record<string, [number, string]>> = {
  first: [1, "st"],
  second: [2, "nd"],
  third: [3, "rd"],
  fourth: [4, "th"],
  fifth: [5, "th"],
  sixth: [6, "th"],
  seventh: [7, "th"],
  eighth: [8, "th"],
  ninth: [9, "th"],
  tenth: [10, "th"],
  eleventh: [11, "th"],
  twelfth: [12, "th"],
  twentieth: [20, "th"],
  thirtieth: [30, "th"],
};

export interface ItnToken {
  text: string;
  /** Index of the first input word this token covers. */
  from: number;
  /** Index after the last input word it covers. */
  to: number;
}

function isNumberWord(w: string): boolean {
  return w in UNITS || w in TENS || w in SCALES;
}

/** Whether a word can take part in a number (callers hold such words back while a stream is open). */
export function mayContinueNumber(word: string): boolean {
  return isNumberWord(word) || word === "and" || word === "point" || word in ORDINALS;
}

interface Parsed {
  value: number;
  /** Words consumed. */
  n: number;
  /** Only single digit words ("four five six" style). */
  digitsOnly: boolean;
}

/** Parses one cardinal number at words[i…]; n = 0 when there is none. */
function parseCardinal(words: readonly string[], i: number): Parsed {
  let total = 0;
  let current = 0;
  let n = 0;
  let last: "unit" | "teen" | "tens" | "scale" | null = null;
  while (i + n < words.length) {
    const w = words[i + n]!;
    if (w in UNITS) {
      const v = UNITS[w]!;
      const kind = v >= 10 ? "teen" : "unit";
      // "twenty five" is one number; "five five" or "twelve three" start a new one.
      if (last === "unit" || last === "teen" || (last === "tens" && kind === "teen")) break;
      if (v === 0 && w === "oh" && last !== null) break;
      current += v;
      last = kind;
    } else if (w in TENS) {
      if (last === "unit" || last === "teen" || last === "tens") break;
      current += TENS[w]!;
      last = "tens";
    } else if (w in SCALES) {
      if (last === null) break;
      const s = SCALES[w]!;
      if (s === 100) {
        if (current === 0 || current >= 100) break;
        current *= 100;
      } else {
        total += (current || 1) * s;
        current = 0;
      }
      last = "scale";
    } else if (w === "and" && last === "scale" && i + n + 1 < words.length) {
      const next = words[i + n + 1]!;
      if (!(next in UNITS || next in TENS)) break;
    } else {
      break;
    }
    n++;
  }
  const digitsOnly = n === 1 && words[i]! in UNITS && UNITS[words[i]!]! < 10;
  return { value: total + current, n, digitsOnly };
}

/** Turns the spoken numbers of a word list into digits. Other words pass through. */
export function inverseNormalize(words: readonly string[]): ItnToken[] {
  const out: ItnToken[] = [];
  let i = 0;
  while (i < words.length) {
    const w = words[i]!;
    if (w in ORDINALS) {
      const [v, suffix] = ORDINALS[w]!;
      out.push({ text: `${v}${suffix}`, from: i, to: i + 1 });
      i++;
      continue;
    }
    const p = parseCardinal(words, i);
    if (p.n === 0) {
      out.push({ text: w, from: i, to: i + 1 });
      i++;
      continue;
    }
    let text = String(p.value);
    let end = i + p.n;
    // A run of single digits is read as one digit string (phone and order numbers).
    if (p.digitsOnly) {
      while (end < words.length) {
        const q = parseCardinal(words, end);
        if (q.n === 0 || !q.digitsOnly) break;
        text += String(q.value);
        end += q.n;
      }
    }
    // "twenty first" → 21st
    const after = words[end];
    if (after && after in ORDINALS && ORDINALS[after]![0] < 10 && p.value % 10 === 0 && p.value >= 20) {
      const [v, suffix] = ORDINALS[after]!;
      text = `${p.value + v}${suffix}`;
      end++;
    } else if (after === "point" && end + 1 < words.length && words[end + 1]! in UNITS) {
      let frac = "";
      let k = end + 1;
      while (k < words.length && words[k]! in UNITS && UNITS[words[k]!]! < 10) {
        frac += String(UNITS[words[k]!]);
        k++;
      }
      if (frac) {
        text = `${text}.${frac}`;
        end = k;
      }
    }
    // A lone "oh" is an interjection and a lone "one" mostly a pronoun ("this one", "no one").
    if (end - i === 1 && (w === "oh" || w === "one")) text = w;
    out.push({ text, from: i, to: end });
    i = end;
  }
  return out;
}
