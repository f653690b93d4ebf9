// Words that only acknowledge: said over the agent, they ask for nothing, and the agent goes on.
// An interruption long enough to stop the agent (a slow "okay okay", a "mm hmm" held over a room's
// noise) is as long as a short real one ("Sorry, I'm in a hurry"): the voice alone cannot tell
// them apart (870 and 920 ms in the noisy turn set), their words can. English only: in another
// language nothing matches, and an interruption stands as it did.

/** Acknowledgements, as a recognizer writes them (lower case, no punctuation); hums apart (HUM). */
const ACKNOWLEDGEMENTS = [
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
  "thanks",
  "thank you",
  "exactly",
  "indeed",
  "wow",
  // Continuers: the caller telling the agent to go on, or that they follow.
  "go on",
  "go ahead",
  "perfect",
  "sounds good",
  "absolutely",
  "definitely",
  "of course",
  "correct",
  "that's right",
  "understood",
  "i understand",
  "makes sense",
  "no problem",
  "awesome",
  "excellent",
  "lovely",
  "cheers",
];

/** The acknowledgements, and hums as dictionaries spell them. */
const ACKNOWLEDGEMENT_HOTWORDS: readonly string[] = [...ACKNOWLEDGEMENTS, "mm", "hmm", "mhm", "uh-huh"];

/**
 * What a recognizer of `language` may be asked to listen for in speech over the agent (as
 * hotwords): the acknowledgements in English, else nothing (none are known in another).
 */
export function acknowledgementHotwords(language: string): readonly string[] {
  return /^en(?:$|[-_])/i.test(language) ? ACKNOWLEDGEMENT_HOTWORDS : [];
}

const PHRASES = ACKNOWLEDGEMENTS.map((p) => p.split(" "))
  // Longest first, so "sure thing" is taken whole before "sure".
  .sort((a, b) => b.length - a.length);

/** The longest run of words a backchannel takes ("okay okay", "oh I see, thanks"). */
const MAX_WORDS = 5;

/**
 * A hum, however a recognizer spells it: "hm", "mmm", "mhm", "mm-hmm", "hmmm". Recognizers agree
 * on no spelling of it, and one that knows letters as words writes it letter by letter ("m m h m
 * m", the embedded PocketSphinx on a long "mm hmm"), so a run of single m's and h's is one word.
 * Not "mm-mm": that one says no.
 */
const HUM = /^(?:m+|(?=[mh-]*m)(?=[mh-]*h)[mh]+(?:-[mh]+)*)$/;

/** `words` with each run of single-letter "m"s and "h"s joined into one word. */
function joinLetters(words: readonly string[]): string[] {
  const out: string[] = [];
  let run = "";
  for (const w of words) {
    if (w === "m" || w === "h") {
      run += w;
      continue;
    }
    if (run) out.push(run);
    run = "";
    out.push(w);
  }
  if (run) out.push(run);
  return out;
}

/**
 * Whether `text`, said over the agent, only acknowledges what it says (or has no words at all: a
 * noise, a cough the recognizer heard nothing in).
 */
export function onlyAcknowledges(text: string): boolean {
  const words = joinLetters(
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}'\s-]/gu, " ")
      .split(/\s+/)
      .filter(Boolean),
  );
  if (words.length > MAX_WORDS) return false;
  let i = 0;
  while (i < words.length) {
    if (HUM.test(words[i]!)) {
      i++;
      continue;
    }
    const phrase = PHRASES.find((p) => p.every((w, k) => words[i + k] === w));
    if (!phrase) return false;
    i += phrase.length;
  }
  return true;
}
