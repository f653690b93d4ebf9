// Words the caller heard twice in one agent reply (`repeated_words`), judged from what reached the
// caller: the simulator's recording of the agent's side, against the sentences the call's speech
// sessions delivered (turns-tts-tap.ts: each sentence's text and its samples). The record's text
// cannot tell (it says what the bridge meant to say, not what played twice), and a sentence
// synthesized twice is not the same audio twice (espeak-ng varies its voice), so each delivered
// sentence is looked for in the recording itself, sample for sample: its audio passes from the
// session to the caller untouched (8 kHz PCM, µ-law on the wire).
//
// Every loud 20 ms window of the recording is hashed; each delivered sentence's windows, every
// 10 ms, are looked up there (each hit checked sample by sample). Hits at one offset between the
// sentence and the recording are one playing of part of it: which stretch of the sentence, and
// where in the call. Two playings of one sentence's text — the same synthesis played again, or a
// new synthesis of it (a reply sent again after a cut speech session) — that cover the same part of
// it were heard twice, when the second starts at most MAX_LAG_MS after the first ends and the
// caller made no sound between (a reprompt or a later reply is not a repeat; the resume after a
// backchannel, which replays a little of what was heard, follows the caller's sound). The part's
// words are its share of the sentence's length times the sentence's words. That length is a
// complete synthesis's: a delivery cut short is not the sentence, and a sentence that never came
// whole is given its letters' length at the pace of the call's sentences that did (else a stutter
// in a sentence cut twice would count as all its words). Repeats of 2 words or more count in
// `repeated_words`, every repeat in `repeated_audio_ms` (a one-word stutter shows there). A
// sentence the model wrote twice in one answer is not counted.
import type { SpokenSentence } from "./turns-tts-tap.ts";

const WINDOW = 160;
const STEP = 80;
/** Later than this after the first playing ended, a second belongs to another reply (a reprompt is 8 s). */
const MAX_LAG_MS = 6000;
/** Speech per letter of a sentence that never came whole, when none came whole to go by, ms. */
const MS_PER_LETTER = 75;
/** Quieter windows are the silence around words, alike everywhere. */
const LOUD_MEAN_ABS = 150;
const B = 0x01000193;
const TOP = (() => {
  let t = 1; // B^(WINDOW-1) mod 2^32
  for (let i = 1; i < WINDOW; i++) t = Math.imul(t, B);
  return t;
})();

export interface Repeats {
  /** Words heard twice, from repeats of 2 words or more. */
  words: number;
  /** All audio heard twice, ms. */
  ms: number;
  /** Each repeat: its sentence, where it played again (ms into the call), how long, its words. */
  runs: Array<{ text: string; atMs: number; ms: number; words: number }>;
  /** Delivered sentences found in the recording: none means the judge saw nothing of this call. */
  found: number;
}

/** A stretch of one delivered sentence heard once: its part (samples into it) and where in the call. */
interface Playing {
  sentence: number;
  text: string;
  from: number;
  to: number;
  length: number;
  at: number;
}

/** Rolling hashes of every window of `pcm`: `each(offset, hash)`. */
function windows(pcm: Int16Array, each: (offset: number, hash: number) => void): void {
  if (pcm.length < WINDOW) return;
  let h = 0;
  for (let i = 0; i < WINDOW; i++) h = (Math.imul(h, B) + pcm[i]!) | 0;
  each(0, h);
  for (let p = 1; p + WINDOW <= pcm.length; p++) {
    h = (Math.imul(h - Math.imul(pcm[p - 1]!, TOP), B) + pcm[p + WINDOW - 1]!) | 0;
    each(p, h);
  }
}

const concat = (chunks: readonly Int16Array[]) => {
  const out = new Int16Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
};

const wordsOf = (text: string) => text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
/** A sentence's words, lower case, as one string: what two syntheses of one text share. */
export const sentenceWords = (text: string) => wordsOf(text).join(" ");
/** Repeats of fewer words are stutters: counted in `ms`, not in `words`. */
export const MIN_REPEAT_WORDS = 2;
const lettersOf = (text: string) => text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;

/** Each sentence's whole length, samples, by its words: a complete synthesis's, else its letters'. */
function wholeLengths(sentences: readonly SpokenSentence[], rate: number): Map<string, number> {
  const whole = new Map<string, number>();
  let samples = 0;
  let letters = 0;
  for (const s of sentences) {
    if (!s.complete) continue;
    const n = s.chunks.reduce((sum, c) => sum + c.length, 0);
    const key = sentenceWords(s.text);
    whole.set(key, Math.max(whole.get(key) ?? 0, n));
    samples += n;
    letters += lettersOf(s.text);
  }
  const perLetter = letters > 0 ? samples / letters : (MS_PER_LETTER * rate) / 1000;
  for (const s of sentences) {
    const key = sentenceWords(s.text);
    if (!whole.has(key)) whole.set(key, lettersOf(s.text) * perLetter);
  }
  return whole;
}

/** Where the delivered sentences played in `recording`, each playing once. */
function playings(recording: Int16Array, sentences: readonly SpokenSentence[]): Playing[] {
  const abs = new Float64Array(recording.length + 1);
  for (let i = 0; i < recording.length; i++) abs[i + 1] = abs[i]! + Math.abs(recording[i]!);
  const index = new Map<number, number[]>();
  windows(recording, (p, h) => {
    if ((abs[p + WINDOW]! - abs[p]!) / WINDOW < LOUD_MEAN_ABS) return;
    const list = index.get(h);
    if (list) list.push(p);
    else index.set(h, [p]);
  });
  const same = (pcm: Int16Array, o: number, p: number) => {
    for (let k = 0; k < WINDOW; k++) if (pcm[o + k] !== recording[p + k]) return false;
    return true;
  };
  const out: Playing[] = [];
  sentences.forEach((s, i) => {
    const pcm = concat(s.chunks);
    const byShift = new Map<number, { from: number; to: number }>();
    windows(pcm, (o, h) => {
      if (o % STEP !== 0) return;
      for (const p of index.get(h) ?? []) {
        if (!same(pcm, o, p)) continue;
        const g = byShift.get(p - o);
        if (g) g.to = o + WINDOW;
        else byShift.set(p - o, { from: o, to: o + WINDOW });
      }
    });
    for (const [shift, g] of byShift)
      out.push({
        sentence: i,
        text: sentenceWords(s.text),
        ...g,
        length: pcm.length,
        at: g.from + shift,
      });
  });
  return out.sort((a, b) => a.at - b.at);
}

/**
 * What of the delivered sentences the caller heard twice within one reply. `callerBetween(fromMs,
 * toMs)`: whether the caller made a sound in that stretch; `saidTwice(text)`: whether the model
 * wrote that sentence twice in one answer.
 */
export function repeatedWords(
  recording: Int16Array,
  rate: number,
  sentences: readonly SpokenSentence[],
  callerBetween: (fromMs: number, toMs: number) => boolean,
  saidTwice: (text: string) => boolean = () => false,
): Repeats {
  const ms = (samples: number) => (samples * 1000) / rate;
  const heard = playings(recording, sentences);
  const whole = wholeLengths(sentences, rate);
  const runs: Repeats["runs"] = [];
  heard.forEach((later, j) => {
    // Samples of the sentence heard again, and its whole length (a cut synthesis is delivered short).
    let best = { overlap: 0, whole: 1 };
    for (const first of heard.slice(0, j)) {
      if (first.text !== later.text || saidTwice(later.text)) continue;
      const firstEnd = first.at + (first.to - first.from);
      // The same stretch of the call matched twice is one playing: the service gives one text the
      // same samples at times (another call's synthesis of it, a cached one).
      if (later.at < firstEnd - STEP) continue;
      if (ms(later.at - firstEnd) > MAX_LAG_MS || callerBetween(ms(first.at), ms(later.at))) continue;
      // espeak-ng times a sentence the same way each time (it varies the voice, not the timing):
      // two syntheses' parts compare sample for sample from the sentence's start.
      const overlap = Math.min(first.to, later.to) - Math.max(first.from, later.from);
      if (overlap > best.overlap)
        best = { overlap, whole: Math.max(first.length, later.length, whole.get(later.text) ?? 0) };
    }
    if (best.overlap <= 0) return;
    const words = Math.round((best.overlap / best.whole) * wordsOf(later.text).length);
    runs.push({ text: later.text, atMs: Math.round(ms(later.at)), ms: Math.round(ms(best.overlap)), words });
  });
  return {
    words: runs.reduce((n, r) => n + (r.words >= MIN_REPEAT_WORDS ? r.words : 0), 0),
    ms: runs.reduce((n, r) => n + r.ms, 0),
    runs,
    found: new Set(heard.map((h) => h.sentence)).size,
  };
}
