// One caller's pauses, learned within the call. Some people stop mid-sentence often and for
// long, some never: the pauses a caller resumed after (how long they were) and the speech ends
// that were really the end of their turn (how often a silence is one) shift the population's
// pause model towards this caller's, with pseudo-counts so that one pause moves it a little and
// bounds so that no history moves it far.

/** Mid-turn pauses of the population: log-normal, median 450 ms (ln 450 ≈ 6.11). */
export const POPULATION_PAUSE_MU = Math.log(450);
export const POPULATION_PAUSE_SIGMA = 0.45;
/** The median pause may move to half or double the population's, no further. */
const MU_BOUND = Math.log(2);
/** How many of the population's pauses a caller's first pauses are weighed against. */
const PRIOR_PAUSES = 3;
/**
 * Prior counts of speech ends that were pauses and that were turn ends: a caller is assumed to
 * pause mid-turn about once per two turns until their own count says otherwise.
 */
const PRIOR_PAUSE_COUNT = 1;
const PRIOR_TURN_END_COUNT = 2;
/** Bound of the shift in log-odds that the caller's own pause rate may make. */
const SHIFT_BOUND = 1.2;
/**
 * Speech shorter than this before a silence is not a phrase of the caller's: a click, a breath, a
 * syllable of a talker behind them. The silence after it teaches nothing. In a quiet room every
 * pause learned followed 320 ms of speech or more; behind a talker, a 62 ms blip of the talker's
 * and the 96 ms until the caller began were learned as a pause of theirs (notes of 2026-12-06).
 */
export const MIN_PHRASE_MS = 250;

/** The speech a silence followed (speechEnded). */
export interface SpeechBefore {
  /** How long the detector heard speech before this silence, ms. */
  ms: number;
  /**
   * The utterance began over the agent. The silences in it are not learned: the speaker may be
   * waiting for the agent to stop, and over the greeting it may not be the caller at all (a talker
   * held 4.7 s over the greeting, then the caller's own first words 32 ms after it ended: learned
   * as a 32 ms pause, which halved the wait after the caller's first words).
   */
  overAgent: boolean;
}

export interface PauseModel {
  /** Log-normal parameters of this caller's mid-turn pauses (ln ms). */
  mu: number;
  sigma: number;
  /** Log-odds to add to "this silence ends the turn": negative for a caller who pauses often. */
  shift: number;
}

const logit = (p: number) => Math.log(p / (1 - p));

export class PauseProfile {
  #logPauseSum = 0;
  #pauses = 0;
  #turnEnds = 0;
  /** Stream position of the speaker's last speech end, ms, when the silence after it may be learned. */
  #lastEndMs: number | undefined;
  readonly #adapt: boolean;

  /** `adapt` false keeps the population's model whatever the caller does. */
  constructor(adapt = true) {
    this.#adapt = adapt;
  }

  /** The speaker stopped at stream position `atMs` (a pause or the end of their turn) after `before`. */
  speechEnded(atMs: number, before: SpeechBefore): void {
    this.#lastEndMs = before.ms >= MIN_PHRASE_MS && !before.overAgent ? atMs : undefined;
  }

  /** The speaker went on, at stream position `atMs`, with the utterance their last speech end paused. */
  resumed(atMs: number): void {
    if (this.#lastEndMs === undefined) return;
    const pauseMs = atMs - this.#lastEndMs;
    this.#lastEndMs = undefined;
    if (pauseMs <= 0) return;
    this.#logPauseSum += Math.log(pauseMs);
    this.#pauses += 1;
  }

  /** The speaker's last speech end was the end of their turn (it was answered, and they let it be). */
  turnEnded(): void {
    this.#turnEnds += 1;
    this.#lastEndMs = undefined;
  }

  get pauses(): number {
    return this.#pauses;
  }

  get turnEnds(): number {
    return this.#turnEnds;
  }

  model(): PauseModel {
    const sigma = POPULATION_PAUSE_SIGMA;
    if (!this.#adapt) return { mu: POPULATION_PAUSE_MU, sigma, shift: 0 };
    const mu = (PRIOR_PAUSES * POPULATION_PAUSE_MU + this.#logPauseSum) / (PRIOR_PAUSES + this.#pauses);
    const prior = PRIOR_TURN_END_COUNT / (PRIOR_TURN_END_COUNT + PRIOR_PAUSE_COUNT);
    const own =
      (PRIOR_TURN_END_COUNT + this.#turnEnds) /
      (PRIOR_TURN_END_COUNT + PRIOR_PAUSE_COUNT + this.#turnEnds + this.#pauses);
    const clamp = (v: number, bound: number) => Math.max(-bound, Math.min(bound, v));
    return {
      mu: POPULATION_PAUSE_MU + clamp(mu - POPULATION_PAUSE_MU, MU_BOUND),
      sigma,
      shift: clamp(logit(own) - logit(prior), SHIFT_BOUND),
    };
  }
}
