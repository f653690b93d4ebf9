// Text helpers of the scripted agent: spoken numbers to digits (phone callers say "one two
// three"), word-by-word streaming pieces, and {placeholder} templates.

const NUMBER_WORDS: Readonly<Record<string, string>> = {
  zero: "0",
  oh: "0",
  one: "1",
  two: "2",
  three: "3",
  four: "4",
  five: "5",
  six: "6",
  seven: "7",
  eight: "8",
  nine: "9",
};

/** Lower-cased text with spoken digits turned into digits ("one two three" → "1 2 3"). */
export function normalizeHeard(text: string): string {
  return text
    .toLowerCase()
    .replace(/\b(zero|oh|one|two|three|four|five|six|seven|eight|nine)\b/g, (w) => NUMBER_WORDS[w] ?? w)
    .replace(/\s+/g, " ")
    .trim();
}

/** Streaming pieces: each word with the whitespace before it. */
export function wordPieces(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}

/** Splits a JSON text into a few fragments, as a model streams tool arguments. */
export function jsonPieces(json: string, size = 12): string[] {
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  return out.length > 0 ? out : [json];
}

/** Fills `{name}` and `{a.b}` placeholders from `vars`; unknown placeholders become "unknown". */
export function fill(template: string, vars: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{([A-Za-z_][\w.]*)\}/g, (_m, key: string) => {
    let v: unknown = vars;
    for (const k of key.split("."))
      v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined;
    if (v === undefined || v === null) return "unknown";
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  });
}

/** Fills placeholders in every string of a JSON-like value (tool call arguments). */
export function fillDeep(value: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof value === "string") return fill(value, vars);
  if (Array.isArray(value)) return value.map((v) => fillDeep(v, vars));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillDeep(v, vars)]));
  }
  return value;
}
