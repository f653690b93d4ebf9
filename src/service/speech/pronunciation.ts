// pronunciation_map (E4, E5): `tone` is a list of "<source>/<replacement>" rules applied to the text
// before synthesis. Chinese replacements carry tones as digits 1–4 (5 = neutral), e.g. "重/chong2";
// they reach the engine as written.

export interface PronunciationRule {
  source: string;
  replacement: string;
}

/** Parses and checks a pronunciation_map; returns an error message instead of rules when invalid. */
export function parsePronunciationMap(value: unknown): PronunciationRule[] | string {
  if (value === undefined || value === null) return [];
  if (typeof value !== "object" || Array.isArray(value)) return "must be an object with a `tone` list";
  const tone = (value as { tone?: unknown }).tone;
  if (tone === undefined) return [];
  if (!Array.isArray(tone)) return "`tone` must be an array of strings";
  const rules: PronunciationRule[] = [];
  for (const [i, rule] of tone.entries()) {
    if (typeof rule !== "string") return `tone[${i}] must be a string "<source>/<replacement>"`;
    const slash = rule.indexOf("/");
    if (slash <= 0 || slash === rule.length - 1) {
      return `tone[${i}] "${rule}" is not of the form "<source>/<replacement>"`;
    }
    rules.push({ source: rule.slice(0, slash), replacement: rule.slice(slash + 1) });
  }
  // Longer sources first, so "New York City" wins over "New York".
  return rules.sort((a, b) => b.source.length - a.source.length);
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Applies the rules; Latin-script sources match whole words only, case-insensitively. */
export function applyPronunciation(text: string, rules: readonly PronunciationRule[]): string {
  if (rules.length === 0) return text;
  const parts = rules.map((r) => {
    const body = escapeRe(r.source);
    return /^[\p{Script=Latin}\d]/u.test(r.source) ? `(?<![\\p{L}\\d])${body}(?![\\p{L}\\d])` : body;
  });
  const re = new RegExp(parts.join("|"), "giu");
  return text.replace(re, (m) => {
    const lower = m.toLowerCase();
    return rules.find((r) => r.source.toLowerCase() === lower)?.replacement ?? m;
  });
}
