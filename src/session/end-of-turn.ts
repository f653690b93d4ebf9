// Whether a (preemptively recognized) utterance sounds finished. Silence alone cannot tell
// a mid-sentence pause from the end of a turn, so the transcript decides how long to wait:
// a complete-sounding one ends the turn after the short silence, a trailing conjunction,
// article or filler waits for the long one.

// biome-ignore format: a word list reads best as a block
const CONTINUATIONS = new Set([
  "and", "but", "or", "so", "because", "cause", "then", "if", "when", "while", "that", "which", "who",
  "the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "this", "these", "those",
  "to", "of", "for", "with", "from", "in", "on", "at", "by", "about", "into", "like",
  "is", "are", "was", "were", "be", "am", "i", "we", "it's", "i'm", "i'd", "we're",
  "um", "uh", "er", "erm", "hmm", "mm", "well", "also", "plus", "maybe", "just",
  "want", "need", "would", "could", "should", "can", "will", "wanted", "trying", "number",
]);

/** "...can you", "...do you" wait for more; "thank you", "...find you" are complete. */
// biome-ignore format: a word list reads best as a block
const ASKING_YOU = new Set([
  "can", "could", "would", "will", "do", "did", "are", "were", "if", "have", "tell", "give", "let", "help",
]);

/** True when the text ends the way an unfinished sentence does. Empty text counts as unfinished. */
export function soundsUnfinished(text: string): boolean {
  const trimmed = text.trim().toLowerCase();
  if (!trimmed) return true;
  if (/[,;:-]$/.test(trimmed)) return true;
  if (/[.?!]$/.test(trimmed)) return false;
  const words = trimmed.split(/\s+/).map((w) => w.replace(/[^a-z']/g, ""));
  const last = words.at(-1) ?? "";
  if (last === "you") return ASKING_YOU.has(words.at(-2) ?? "");
  return CONTINUATIONS.has(last);
}
