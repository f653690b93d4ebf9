// Hotword biasing: the hotwords as dictionary words, and how many words of a candidate transcript
// they cover. The engine rescores the lattice's best alternatives with a bonus per hotword word
// (sphinx-engine.ts), so every other word stays recognizable.

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

/**
 * How many words of a candidate transcript belong to hotword phrases found in it (each phrase
 * counted where its whole word sequence occurs).
 */
export function hotwordHits(words: readonly string[], phrases: readonly string[][]): number {
  const covered = new Uint8Array(words.length);
  for (const p of phrases) {
    for (let i = 0; i + p.length <= words.length; i++) {
      let match = true;
      for (let k = 0; k < p.length && match; k++) match = words[i + k] === p[k];
      if (match) covered.fill(1, i, i + p.length);
    }
  }
  return covered.reduce((a, b) => a + b, 0);
}
