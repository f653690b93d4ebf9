// Typed access to the PocketSphinx Node-API addon (native/sphinx/addon.c, built by native/build.sh).
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const SPHINX_ADDON_PATH = fileURLToPath(
  new URL("../../../../native/build/sphinx.node", import.meta.url),
);

/** Opaque decoder handle owned by the addon. */
export type DecoderHandle = { readonly __sphinxDecoder: unique symbol };

export interface SphinxSegment {
  /** Dictionary word, a filler (`<sil>`, `[NOISE]`, `<s>`, `</s>`) or an alternative like `read(2)`. */
  word: string;
  /** Inclusive frame range, 100 frames per second. */
  startFrame: number;
  endFrame: number;
}

export interface SphinxResult {
  hyp: string;
  words: SphinxSegment[];
}

export interface SphinxAlternative extends SphinxResult {
  /** Path score (log base 1.0001, language weight applied): higher is better. */
  score: number;
}

export interface SphinxAddon {
  create(args: string[]): Promise<DecoderHandle>;
  /** "" selects the decoder's default search. */
  useSearch(h: DecoderHandle, name: string): void;
  lookup(h: DecoderHandle, word: string): string | null;
  addWord(h: DecoderHandle, word: string, phones: string): boolean;
  start(h: DecoderHandle): void;
  /** Sets the cepstral-mean estimate from a whole utterance (call after start, before process). */
  prime(h: DecoderHandle, pcm: Int16Array): Promise<void>;
  process(h: DecoderHandle, pcm: Int16Array, fullUtt: boolean): Promise<SphinxResult>;
  /** Ends the utterance; with nbest > 0 also returns up to that many lattice alternatives. */
  end(h: DecoderHandle, nbest?: number): Promise<SphinxResult & { nbest?: SphinxAlternative[] }>;
  free(h: DecoderHandle): void;
}

let loaded: SphinxAddon | undefined;

export function loadSphinxAddon(path = SPHINX_ADDON_PATH): SphinxAddon {
  if (loaded) return loaded;
  if (!existsSync(path)) throw new Error(`PocketSphinx addon not built (${path}): run native/build.sh`);
  loaded = createRequire(import.meta.url)(path) as SphinxAddon;
  return loaded;
}

/** Frames per second of PocketSphinx's front end (10 ms shift). */
export const SPHINX_FRAME_RATE = 100;
/** The en-us acoustic model's sample rate. */
export const SPHINX_SAMPLE_RATE = 16000;
