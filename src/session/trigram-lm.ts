// The recognizer's own English trigram model, read in place from sphinxbase's binary trie
// format (the `en-us.lm.bin` that Debian's pocketsphinx-en-us installs; sphinxbase's
// lm_trie.c, lm_trie_quant.c, bitarr.c). The file is kept as one buffer and looked up where it
// lies, as sphinxbase does: nothing is unpacked at load but the word list, so loading costs
// one file read and a lookup is a few binary searches over bit-packed entries.
//
// Layout (little-endian):
//   "Trie Language Model" | u8 order | u32 counts[order]
//   i32 (was the quantizer's type) | float bins: per middle order 2^16 probabilities and
//     2^16 back-offs, then 2^16 probabilities of the longest order
//   unigrams: (counts[0] + 1) × { f32 prob, f32 backoff, u32 next }   (next: first child)
//   per middle order, bit-packed entries { word, bo (16), prob (16), next }, then the longest
//     order's { word, prob (16) }; each array has one extra entry (the last `next`) and 8 bytes
//     of slack
//   i32 length | the words, NUL-terminated, in id order
// The trie runs backwards through the n-gram: a unigram's children are the words before it, so
// the path to P(w3 | w1 w2) is w3 → w2 → w1. Probabilities are sphinxbase log units (base
// 1.0001 natural-log scaled), converted to log10 here.
import { readFile } from "node:fs/promises";

const MAGIC = "Trie Language Model";
const QUANT_BITS = 16;
const QUANT_BINS = 1 << QUANT_BITS;
/** log10 of sphinxbase's default log base, 1.0001. */
const LOG10_BASE = Math.log10(1.0001);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Bits needed for values up to `max` (sphinxbase's bitarr_required_bits). */
function requiredBits(max: number): number {
  let bits = 0;
  for (let v = max; v > 0; v = Math.floor(v / 2)) bits++;
  return bits;
}

/** One bit-packed array of trie entries (sphinxbase's middle_t / longest_t). */
interface Level {
  /** Byte offset of the array in the file. */
  at: number;
  wordBits: number;
  totalBits: number;
  /** Bits of the child pointer (middle orders only; 0 for the longest). */
  nextBits: number;
  /** Offset of the child pointer inside an entry, bits. */
  nextAt: number;
}

export class TrigramLmFormatError extends Error {}

export class TrigramLm {
  readonly order: number;
  readonly counts: readonly number[];
  readonly #buf: Uint8Array;
  readonly #view: DataView;
  /** The words in id order; looked up by binary search when sorted, else through #ids. */
  readonly #words: string[];
  readonly #ids: Map<string, number> | undefined;
  /** Float bins: [middle prob, middle bo] per middle order, then the longest order's probs. */
  readonly #bins: Float32Array[];
  readonly #unigramsAt: number;
  readonly #levels: Level[];
  readonly endId: number;

  /** Parses the header and word list of a model already in memory (see load()). */
  constructor(buf: Uint8Array) {
    this.#buf = buf;
    this.#view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const magic = new TextDecoder().decode(buf.subarray(0, MAGIC.length));
    if (magic !== MAGIC) throw new TrigramLmFormatError("not a sphinxbase trie language model");
    let at = MAGIC.length;
    this.order = buf[at++]!;
    if (this.order < 2 || this.order > 3) throw new TrigramLmFormatError(`order ${this.order} not supported`);
    const counts: number[] = [];
    for (let i = 0; i < this.order; i++, at += 4) counts.push(this.#view.getUint32(at, true));
    this.counts = counts;
    at += 4; // the quantizer's former type
    this.#bins = [];
    for (let i = 0; i < 2 * (this.order - 2) + 1; i++, at += QUANT_BINS * 4) {
      // The bins are read in place where the buffer allows it (an aligned little-endian host).
      const offset = buf.byteOffset + at;
      if (offset % 4 === 0 && LITTLE_ENDIAN)
        this.#bins.push(new Float32Array(buf.buffer, offset, QUANT_BINS));
      else {
        const bins = new Float32Array(QUANT_BINS);
        for (let j = 0; j < QUANT_BINS; j++) bins[j] = this.#view.getFloat32(at + j * 4, true);
        this.#bins.push(bins);
      }
    }
    this.#unigramsAt = at;
    at += (counts[0]! + 1) * 12;
    const wordBits = requiredBits(counts[0]!);
    this.#levels = [];
    for (let n = 2; n <= this.order; n++) {
      const longest = n === this.order;
      const nextBits = longest ? 0 : requiredBits(counts[n]!);
      const quant = longest ? QUANT_BITS : 2 * QUANT_BITS;
      const totalBits = wordBits + quant + nextBits;
      this.#levels.push({ at, wordBits, totalBits, nextBits, nextAt: wordBits + quant });
      at += Math.floor(((1 + counts[n - 1]!) * totalBits + 7) / 8) + 8;
    }
    const wordsLength = this.#view.getInt32(at, true);
    at += 4;
    if (at + wordsLength !== buf.byteLength)
      throw new TrigramLmFormatError(`word list ends at ${at + wordsLength}, file at ${buf.byteLength}`);
    // One decode of the whole list, split at the NULs (the words are ASCII).
    const words = new TextDecoder("latin1").decode(buf.subarray(at, at + wordsLength)).split("\0");
    words.pop(); // after the last NUL
    if (words.length !== counts[0])
      throw new TrigramLmFormatError(`${words.length} words listed, ${counts[0]} unigrams`);
    this.#words = words;
    // Models are written with their words in byte order, so a binary search finds them without
    // a map of 70,000 entries to build (half the load time); any other order gets the map.
    let sorted = true;
    for (let i = 1; i < words.length && sorted; i++) sorted = words[i - 1]! < words[i]!;
    if (!sorted) this.#ids = new Map(words.map((w, i) => [w, i]));
    const end = this.id("</s>");
    if (end === undefined) throw new TrigramLmFormatError("no </s> in the model");
    this.endId = end;
  }

  /** Reads a model file (asynchronously: the call path never waits on the disk). */
  static async load(path: string): Promise<TrigramLm> {
    return new TrigramLm(await readFile(path));
  }

  /** The word's id, or undefined when the model does not know it. */
  id(word: string): number | undefined {
    if (this.#ids) return this.#ids.get(word);
    const words = this.#words;
    let lo = 0;
    let hi = words.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const w = words[mid]!;
      if (w < word) lo = mid + 1;
      else if (w > word) hi = mid - 1;
      else return mid;
    }
    return undefined;
  }

  /**
   * log10 P(word | history) with Katz back-off; `history` is oldest first and only its last
   * order − 1 ids count. Unknown words are not accepted here (see id()).
   */
  logProb(word: number, history: readonly number[]): number {
    const n = Math.min(history.length, this.order - 1);
    // Most recent first, as the trie runs.
    const h = history.slice(history.length - n).reverse();
    let prob = this.#unigramProb(word);
    let range = this.#children(word);
    let used = 0;
    // Walk down the trie as far as the history matches: each level is the next word back.
    for (let i = 0; i < n; i++) {
      const level = this.#levels[i]!;
      const entry = this.#find(level, range, h[i]!);
      if (entry < 0) break;
      prob = this.#entryProb(i, entry);
      used = i + 1;
      if (i + 1 < this.#levels.length) range = this.#childRange(level, entry);
    }
    // Back-off weights of the contexts longer than what matched.
    return (prob + this.#backoff(h, used)) * LOG10_BASE;
  }

  /** log10 P(</s> | history): how likely a sentence ends after these words. */
  logProbEnd(history: readonly number[]): number {
    return this.logProb(this.endId, history);
  }

  #backoff(h: readonly number[], used: number): number {
    // P(w | h_1..h_n) backs off through bo(h_1..h_k) for every k > used.
    if (used >= h.length) return 0;
    let bo = 0;
    let range = this.#children(h[0]!);
    if (used === 0) bo += this.#unigramBo(h[0]!);
    for (let k = 1; k < h.length; k++) {
      const level = this.#levels[k - 1]!;
      const entry = this.#find(level, range, h[k]!);
      if (entry < 0) break;
      if (k >= used) bo += this.#entryBo(k - 1, entry);
      if (k < this.#levels.length - 1) range = this.#childRange(level, entry);
    }
    return bo;
  }

  #unigramProb(w: number): number {
    return this.#view.getFloat32(this.#unigramsAt + w * 12, true);
  }

  #unigramBo(w: number): number {
    return this.#view.getFloat32(this.#unigramsAt + w * 12 + 4, true);
  }

  #children(w: number): [number, number] {
    const at = this.#unigramsAt + w * 12 + 8;
    return [this.#view.getUint32(at, true), this.#view.getUint32(at + 12, true)];
  }

  #childRange(level: Level, entry: number): [number, number] {
    const bit = entry * level.totalBits + level.nextAt;
    return [
      this.#bits(level.at, bit, level.nextBits),
      this.#bits(level.at, bit + level.totalBits, level.nextBits),
    ];
  }

  /** The entry for `word` among a node's children (sorted by word id), or -1. */
  #find(level: Level, [begin, end]: [number, number], word: number): number {
    let lo = begin;
    let hi = end - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const w = this.#bits(level.at, mid * level.totalBits, level.wordBits);
      if (w < word) lo = mid + 1;
      else if (w > word) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  /** Probability of an entry at trie depth `depth` (0: bigrams). */
  #entryProb(depth: number, entry: number): number {
    const level = this.#levels[depth]!;
    const longest = depth === this.#levels.length - 1;
    const bit = entry * level.totalBits + level.wordBits + (longest ? 0 : QUANT_BITS);
    return this.#bins[2 * depth]![this.#bits(level.at, bit, QUANT_BITS)]!;
  }

  #entryBo(depth: number, entry: number): number {
    const level = this.#levels[depth]!;
    const bit = entry * level.totalBits + level.wordBits;
    return this.#bins[2 * depth + 1]![this.#bits(level.at, bit, QUANT_BITS)]!;
  }

  /** `length` (≤ 25) bits at bit offset `bit` of the array at byte `at` (bitarr_read_int25). */
  #bits(at: number, bit: number, length: number): number {
    const b = this.#buf;
    const p = at + (bit >>> 3);
    const v = (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
    return (v >>> (bit & 7)) & ((1 << length) - 1);
  }
}
