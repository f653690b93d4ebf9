// Hotword biasing: the hotwords become a small bigram language model (ARPA text) that PocketSphinx
// interpolates with its general English model, so hotword words and their word sequences gain
// probability while every other word stays recognizable.

/** Lower-cased dictionary words of a hotword entry; punctuation other than apostrophes dropped. */
export function hotwordTokens(hotword: string): string[] {
  return hotword
    .toLowerCase()
    .replace(/[^a-z0-9' ]+/g, " ")
    .split(/\s+/)
    .filter((w) => w.length > 0 && /[a-z]/.test(w));
}

/** Stable cache key of a hotword list (order and case do not matter). */
export function hotwordKey(phrases: readonly string[][]): string {
  return [...new Set(phrases.map((p) => p.join(" ")))].sort().join("|");
}

const log10 = (x: number) => Math.log10(x).toFixed(4);

/**
 * ARPA bigram model of the phrases: unigrams by frequency, bigrams for the word sequences inside
 * each phrase and from <s> / to </s>, backing off to unigrams for everything else.
 */
export function hotwordArpa(phrases: readonly string[][]): string {
  const uni = new Map<string, number>();
  const bi = new Map<string, number>();
  const after = new Map<string, number>();
  const add = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);
  for (const p of phrases) {
    if (p.length === 0) continue;
    for (const w of p) add(uni, w);
    const seq = ["<s>", ...p, "</s>"];
    for (let i = 0; i + 1 < seq.length; i++) {
      add(bi, `${seq[i]} ${seq[i + 1]}`);
      add(after, seq[i]!);
    }
  }
  const n = phrases.filter((p) => p.length > 0).length;
  const total = [...uni.values()].reduce((a, b) => a + b, 0) + n;
  const lines = [
    "\\data\\",
    `ngram 1=${uni.size + 2}`,
    `ngram 2=${bi.size}`,
    "",
    "\\1-grams:",
    `${log10(n / total)} </s> 0`,
    "-99 <s> -0.3010",
  ];
  for (const [w, c] of uni) lines.push(`${log10(c / total)} ${w} -0.3010`);
  lines.push("", "\\2-grams:");
  // Half of each history's mass goes to the phrase continuations, half is left to back-off.
  for (const [k, c] of bi) lines.push(`${log10((0.5 * c) / after.get(k.split(" ")[0]!)!)} ${k}`);
  lines.push("", "\\end\\", "");
  return lines.join("\n");
}
