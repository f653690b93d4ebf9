// Where the caller's speech begins, by their level (caller-voice.ts decides whether it may). The
// detector calls an onset 100–150 ms late, so when it does, the frames since a little before are
// searched for a run at the caller's onset level; outside the detector's speech, each frame
// extends or breaks such a run as it comes. Either way the onset is placed back through a soft
// first syllable, no earlier than the detector's own start.

import { powerDb } from "../../codecs/level-tracker.ts";
import { type CallerFrames, SHORT_FRAMES } from "./caller-frames.ts";
import { type CallerLevel, ONSET_BELOW_DB } from "./caller-level.ts";

/** Frames at the onset level in a row that make an onset of the caller's. */
const ONSET_FRAMES = 2;
/** How much of the short level's lag (half its window) an onset found by level is moved back, ms. */
export const ONSET_LAG_MS = 40;
/** A detector start is the caller's if their onset is found from this long before it, ms. */
export const LOOKBACK_MS = 100;

/** An onset of the caller's: where it began (stream ms) and its loudest frame's level (dBFS). */
export interface Onset {
  atMs: number;
  db: number;
}

export class CallerOnset {
  readonly #frames: CallerFrames;
  readonly #level: CallerLevel;
  /** Frames in a row at the onset level, outside the caller's speech. */
  #run = 0;

  constructor(frames: CallerFrames, level: CallerLevel) {
    this.#frames = frames;
    this.#level = level;
  }

  /** The run so far is broken (the caller's speech began or ended, the detector's ended). */
  restart(): void {
    this.#run = 0;
  }

  /**
   * The detector heard speech begin at `atMs`: the caller's onset in the frames since LOOKBACK_MS
   * before it, at the bar `onsetDb`, if there is one. `resuming`: right after the caller stopped.
   */
  lookBack(atMs: number, onsetDb: number, resuming: boolean): Onset | undefined {
    // A run of frames at the caller's level is the onset only once the detector's own speech has
    // a frame at that level: a loud sound that ended just before it (a cough, then the room's
    // voice) is not. Right after the caller stopped it is: their next word's loud first syllable,
    // placed before the detector's.
    let run = 0;
    let heard = resuming;
    const f = this.#frames;
    for (let i = f.oldest; i < f.written; i++) {
      if (f.endMs(i) <= atMs - LOOKBACK_MS) continue;
      if (
        f.endMs(i) > atMs &&
        this.#startsAt(i, Math.min(f.db(i), f.levelSince(i, atMs, SHORT_FRAMES)), onsetDb)
      )
        heard = true;
      run = this.#startsAt(i, this.#onsetLevel(i, resuming), onsetDb) ? run + 1 : 0;
      if (run >= ONSET_FRAMES && heard) return this.#onset(i - run + 1, i, atMs);
    }
    return undefined;
  }

  /**
   * The last frame, at short level `db`, outside the caller's speech: the onset its run makes, if
   * the detector hears speech (since `vadStartMs`; undefined if it does not) and the run is long enough.
   */
  frame(db: number, vadStartMs: number | undefined, onsetDb: number, resuming: boolean): Onset | undefined {
    // In the detector's speech, only its own frames: the short level still carries a loud sound
    // that ended just before it (a cough, then a room's voice the detector hears). Right after the
    // caller stopped, the rest of their sentence (#onsetLevel).
    const f = this.#frames;
    const last = f.written - 1;
    let level = db;
    if (resuming) level = this.#onsetLevel(last, true);
    else if (vadStartMs !== undefined) level = Math.min(db, f.levelSince(last, vadStartMs, SHORT_FRAMES));
    this.#run = this.#startsAt(last, level, onsetDb) ? this.#run + 1 : 0;
    if (vadStartMs === undefined || this.#run < ONSET_FRAMES) return undefined;
    return this.#onset(last + 1 - this.#run, last, vadStartMs);
  }

  /** The onset whose run is frames `first` to `last`, in the detector's speech begun at `vadStartMs`. */
  #onset(first: number, last: number, vadStartMs: number): Onset {
    return { atMs: this.#onsetMs(first, vadStartMs), db: this.#frames.loudest(first, last) };
  }

  /**
   * Frame `i`, at `level`, may start the caller's speech: at the bar `onset`, or under it at their
   * softer level, a voice not of another pitch (CallerLevel.softerDb, CallerFrames.softerTheirs).
   */
  #startsAt(i: number, level: number, onset: number): boolean {
    return level >= onset || (this.#frames.softerTheirs(i) && level >= this.#level.softerDb());
  }

  /**
   * Where speech whose first loud frame is frame `first` began: back through the frames before it
   * that are at the level that keeps the caller's speech going (a soft first syllable), no
   * earlier than the detector's own start.
   */
  #onsetMs(first: number, vadStartMs: number): number {
    const cont = this.#level.continueDb();
    const f = this.#frames;
    let i = first;
    while (i > f.oldest && f.startMs(i) > vadStartMs) {
      if (f.db(i - 1) < cont) break;
      i--;
    }
    return Math.max(vadStartMs, f.startMs(i) - ONSET_LAG_MS);
  }

  /**
   * Frame `i`'s level as an onset: its short level; or, right after the caller stopped and over a
   * room that seldom sounds like a voice, the louder of that and its last two frames' (40 ms)
   * where those are within ONSET_BELOW_DB of the caller's level, dBFS. The rest of a sentence
   * after a pause may begin with one short syllable at their level, which the short level's
   * 100 ms dilutes below a bar the room's peaks set at their level (music at 10 dB): they were
   * heard at their next stressed syllable, a third of a second late. Over a talker, the talker's
   * syllables would pass as often; over music, without the bound by their level, its own sounds.
   */
  #onsetLevel(i: number, resuming: boolean): number {
    const f = this.#frames;
    const db = f.db(i);
    if (!resuming || !this.#level.roomSeldomVoice || i - 1 < f.oldest) return db;
    const pair = powerDb((f.power(i) + f.power(i - 1)) / 2);
    return pair >= this.#level.callerDb - ONSET_BELOW_DB ? Math.max(db, pair) : db;
  }
}
