// Words that only acknowledge: said over the agent, they ask for nothing, and the agent goes on.
// An interruption long enough to stop the agent (a slow "okay okay", a "mm hmm" held over a room's
// noise) is as long as a short real one ("Sorry, I'm in a hurry"): the voice alone cannot tell
// them apart (870 and 920 ms in the noisy turn set), their words can. English only: in another
// language nothing matches, and an interruption stands as it did.

/** Acknowledgements, as a recognizer writes them (lower case, no punctuation). */
const PHRASES = [
  "ok",
  "okay",
  "k",
  "alright",
  "all right",
  "right",
  "yes",
  "yeah",
  "yep",
  "yup",
  "ya",
  "sure",
  "sure thing",
  "fine",
  "good",
  "great",
  "cool",
  "nice",
  "i see",
  "got it",
  "gotcha",
  "oh",
  "ah",
  "aha",
  "uh huh",
  "uh-huh",
  "mhm",
  "mm",
  "mmm",
  "hmm",
  "hm",
  "mm hmm",
  "mm-hmm",
  "thanks",
  "thank you",
  "exactly",
  "indeed",
  "wow",
]
  .map((p) => p.split(" "))
  // Longest first, so "mm hmm" is taken whole before "mm".
  .sort((a, b) => b.length - a.length);

/** The longest run of words a backchannel takes ("okay okay", "oh I see, thanks"). */
const MAX_WORDS = 5;

/**
 * Whether `text`, said over the agent, only acknowledges what it says (or has no words at all: a
 * noise, a cough the recognizer heard nothing in).
 */
export function onlyAcknowledges(text: string): boolean {
  const words = text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}'\s-]/gu, " ")
    .split(/\s+/)
    .filter(Boolean);
  if (words.length > MAX_WORDS) return false;
  let i = 0;
  while (i < words.length) {
    const phrase = PHRASES.find((p) => p.every((w, k) => words[i + k] === w));
    if (!phrase) return false;
    i += phrase.length;
  }
  return true;
}
