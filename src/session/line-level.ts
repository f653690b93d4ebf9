// How loud callers on a line usually are, learned across its calls. Inside one call a voice heard
// before the caller has spoken is taken for theirs: nothing else has been heard yet, and a voice
// 10 dB over a steady hiss is a talker across the room in one call and the caller over a steady
// noise in the next (notes of 2026-12-02). Such a talker, beginning while the greeting played,
// stopped it. Across calls the two differ: callers on one line reach the bridge within some dB of
// each other, and a talker behind them lies 10–20 dB under them. So each call ends by teaching the
// line its caller's level, and the next call's gate (caller-voice.ts) does not let a voice far
// under the line's usual one stop the agent before that call's caller has been heard. A caller who
// really is that soft is heard when they speak again after a pause: the voice held back is the
// room's only until 2.5 s pass without it (LineHold). A voice well over the line's usual one is
// the caller's, however loud the call's room has been (LINE_ABOVE_DB). The lines outlive the
// process: the bridge teaches them its records' last calls at start, and the other bridges' on a
// shared database (app/bridge/line-levels.ts).

/** The calls a line's usual level is the median of: the last so many. */
export const LINE_CALLS = 31;
/** Calls learned before a line's usual level is known. */
export const LINE_KNOWN_CALLS = 3;
/** A call teaches the line only if its caller's level was learned from this much of their speech, ms. */
export const LINE_LEARN_MS = 1000;
/**
 * While the agent speaks and nobody has been heard in the call, a sound starts the caller's speech
 * only from this far under the line's usual caller level, dB. Callers' first syllables stood 2–14
 * dB over their own level (its median), and the noisy set's callers differ by up to 15 dB: its
 * softest caller's first word stood 2 dB over the line's median. A talker 16 dB under their caller
 * stood 2–12 dB under it; a conversation at the next table 10 dB under its caller, 0.5–6 dB: from
 * 6 dB under, it stopped 12 of a set's 70 greetings, from 4 dB under 7. Offline, callers 4.6 dB
 * softer than the line's usual ones were all heard over the greeting but the set's softest "mm
 * hmm"; 8.6 dB softer, most of them went unheard until it ended (from 6 dB under: all but two).
 * Notes of 2026-12-05 and 2026-12-07.
 */
export const LINE_BELOW_DB = 4;

/**
 * ...and, while it holds, a sound LINE_ABOVE_DB over the line's usual caller level starts the
 * caller's speech however loud the call's room has been: the line's level stands in for the
 * caller's own, which caps their bar once they are heard (caller-level.ts onsetDb). A shop's
 * announcement as the call connected, its loudest 2 dB over the line's usual caller, set the bar
 * over a caller 4–6 dB over it; the room then learned their unheard words as its own voice's
 * loudest, each raising the bar over the next, and "Sorry, stop, I can't hear you" went unheard
 * over the greeting (a talker held by the line did the same). Offline over 52 rooms and draws,
 * 5 of 10 such interruptions were then heard, and 3 greetings more of 50 were stopped by a room
 * whose voice stood that loud (notes of 2026-12-07), dB.
 */
export const LINE_ABOVE_DB = 3;

/**
 * The first voice taken for the caller while the line held is on trial for its first TRIAL_MS: if
 * its frames where the voice sounds do not reach the line's bar (LINE_BELOW_DB under its usual
 * caller) even at their TRIAL_QUANTILE, it was the room's, however loud its loudest syllable. A
 * conversation at the next table, 10 dB under its caller, reaches that bar at a syllable now and
 * then, and talks on long enough to stop the greeting (conv.wav:10: 9 of 70 greetings). Over
 * their first 600 ms, such voices' 90th percentile stood 1.5–15 dB under the line's usual caller;
 * every caller's who talked over the greeting, 1.9 dB under it or higher. Offline over 15 rooms at
 * two draws and the flite set, greetings stopped 36 → 20, with no interruption missed; callers
 * 4.6 dB softer than the line's usual ones lost one interruption of 10 more (5.6 dB: two or three).
 * Notes of 2026-12-07. It ends before the session takes talk over the agent for an interruption
 * (bargeInConfirmMs, 1 s), ms.
 */
export const TRIAL_MS = 600;
const TRIAL_QUANTILE = 0.9;

/** Whether a caller heard at `callerDb`, their level learned from `speechMs` of speech, teaches their line. */
export function teachesLine(callerDb: number, speechMs: number): boolean {
  return Number.isFinite(callerDb) && speechMs >= LINE_LEARN_MS;
}

/** What a call's gate knows of its line and of the agent (caller-voice.ts). */
export interface LineContext {
  /** The usual caller level of the line the call came in on (LineLevel.usualDb), dBFS. */
  lineDb?: number;
  /** The agent is speaking (or about to: its reply's audio is on its way). */
  agentSpeaking?: () => boolean;
}

export class LineLevel {
  readonly #levels = new Float64Array(LINE_CALLS);
  #count = 0;
  #next = 0;

  /**
   * A call ended whose caller was heard at `callerDb` (their level's median), learned from
   * `speechMs` of their speech. A call in which the caller said little teaches nothing: a level
   * from a cough or one "yes" is not theirs yet.
   */
  learn(callerDb: number, speechMs: number): void {
    if (!teachesLine(callerDb, speechMs)) return;
    this.#levels[this.#next] = callerDb;
    this.#next = (this.#next + 1) % LINE_CALLS;
    if (this.#count < LINE_CALLS) this.#count++;
  }

  /** Calls learned (at most LINE_CALLS). */
  get calls(): number {
    return this.#count;
  }

  /**
   * The usual caller level of the line: the median over its last calls, dBFS; undefined until
   * LINE_KNOWN_CALLS have taught it. The median, so that a call whose "caller" was a talker (taken
   * for them, the caller silent) does not move it.
   */
  usualDb(): number | undefined {
    if (this.#count < LINE_KNOWN_CALLS) return undefined;
    const sorted = this.#levels.slice(0, this.#count).sort();
    const mid = this.#count >> 1;
    return this.#count % 2 ? sorted[mid] : (sorted[mid - 1]! + sorted[mid]!) / 2;
  }
}

/** The lines of a bridge, by name (a transport's: "twilio", "sip"...), each learned on its own. */
export class LineLevels {
  readonly #lines = new Map<string, LineLevel>();

  for(line: string): LineLevel {
    let l = this.#lines.get(line);
    if (!l) {
      l = new LineLevel();
      this.#lines.set(line, l);
    }
    return l;
  }
}

/**
 * One call's hold on its caller's first voice by its line's level: while it holds, a voice under
 * the line's bar does not start the caller's speech, and the detector's speech that only the line
 * kept out (it stood over the call's own bar) is a held voice, which the gate learns as the room's
 * until it is settled as the voice heard as the call connected is (caller-voice.ts).
 */
export class LineHold {
  readonly #context: LineContext;
  /** The caller's speech has started in the call (whoever's it proves to be): nothing is held. */
  #started = false;
  /** A voice has been held and is not yet settled. */
  #voice = false;
  /** ...and the detector's speech now is such a voice. */
  #holding = false;
  /** The first voice's trial: from when (undefined when none is under way), and its frames' levels so far. */
  #trialFromMs: number | undefined;
  #trialFrames = 0;
  readonly #trialDb = new Float64Array(Math.ceil(TRIAL_MS / 10));

  constructor(context: LineContext) {
    this.#context = context;
  }

  /** The line's usual caller level as the call began, dBFS; undefined if the line was not yet known. */
  get lineDb(): number | undefined {
    return this.#context.lineDb;
  }

  /** The agent speaks, nobody has been heard in the call, and the line's usual caller level is known. */
  holds(): boolean {
    return this.#holdingDb() !== undefined;
  }

  /**
   * The bar `bar` (the call's own) while the line holds: raised to the line's bar, and no higher
   * than LINE_ABOVE_DB over its usual caller, dBFS.
   */
  bar(bar: number): number {
    const usual = this.#holdingDb();
    if (usual === undefined) return bar;
    return Math.max(Math.min(bar, usual + LINE_ABOVE_DB), usual - LINE_BELOW_DB);
  }

  /** A voice has been held and is not yet settled (dropped()). */
  get voice(): boolean {
    return this.#voice;
  }

  /**
   * A frame at short level `db` in the detector's speech, not the caller's, while the line holds
   * (and the call's own bar `ownBarDb`): whether it is held, and `first` when it is the first held
   * of that speech (its frames before it are held too).
   */
  frame(db: number, ownBarDb: number): "no" | "first" | "held" {
    if (!this.#holding && db < ownBarDb) return "no";
    const first = !this.#holding;
    this.#holding = this.#voice = true;
    return first ? "first" : "held";
  }

  /** The held voice was settled as no room's: it was dropped from the room's levels. */
  dropped(): void {
    this.#voice = false;
  }

  /** The detector's speech ended: a first voice shorter than its trial stays the caller's. */
  speechEnded(): void {
    this.#holding = false;
    this.#trialFromMs = undefined;
  }

  /**
   * The caller's speech started at stream position `atMs`: nothing is held from now on, but if the
   * line held until now, this first voice is on trial (trial()).
   */
  started(atMs: number): void {
    this.#trialFromMs = this.holds() ? atMs : undefined;
    this.#trialFrames = 0;
    this.#started = true;
  }

  /**
   * A frame at level `db` ending at stream position `nowMs` in the caller's speech, `sounding` if
   * the voice is going on in it (not a gap between its words): "room" once the first voice's trial
   * finds it was the room's (the line holds again, and the detector's speech now is a held voice);
   * undefined while the trial goes on, or when there is none.
   */
  trial(db: number, nowMs: number, sounding: boolean): "room" | undefined {
    const from = this.#trialFromMs;
    // A trial begins only while the line holds, so its usual level is known.
    const usualDb = this.#context.lineDb;
    if (from === undefined || usualDb === undefined) return undefined;
    if (sounding && this.#trialFrames < this.#trialDb.length) this.#trialDb[this.#trialFrames++] = db;
    if (nowMs - from < TRIAL_MS) return undefined;
    this.#trialFromMs = undefined;
    if (this.#trialFrames === 0) return undefined;
    const heard = this.#trialDb.subarray(0, this.#trialFrames).sort();
    if (heard[Math.floor(TRIAL_QUANTILE * (this.#trialFrames - 1))]! >= usualDb - LINE_BELOW_DB)
      return undefined;
    this.#started = false;
    this.#holding = this.#voice = true;
    return "room";
  }

  /** The line's usual caller level while it holds, dBFS; undefined while it does not. */
  #holdingDb(): number | undefined {
    const { lineDb, agentSpeaking } = this.#context;
    if (this.#started || lineDb === undefined || !agentSpeaking?.()) return undefined;
    return lineDb;
  }
}
