// When the caller's turn is over. Silence alone cannot tell a mid-sentence pause from the end
// of a turn, so each utterance end is weighed: how likely its words end a sentence (a language
// model's P(</s> | last words)), how the voice ended (pitch, level), and how this caller pauses.
// Together they are the odds that the turn is complete when the silence begins; every moment
// of silence after that is more evidence, since a mid-turn pause that has lasted s ms goes on
// only with the probability S(s) that such pauses last that long (their survival function).
// The turn is confirmed once the odds pass the configured confidence:
//   log-odds(complete | evidence, silence s) = z − ln S(s)  ≥  logit(confidence),
// so the wait is S⁻¹(exp(z − logit(confidence))): short when the turn is clearly complete, long
// when it clearly is not, continuous in between, and bounded by the configured min and max.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { TurnTakingConfig } from "./config.ts";
import type { PauseModel } from "./pause-profile.ts";
import type { EndProsody } from "./prosody.ts";
import type { TurnCompletionModel } from "./turn-completion.ts";

/** What is known of an utterance end when its words arrive. */
export interface TurnEvidence {
  /** P(</s> | the words), when the completion model could say. */
  lmEnd: number | undefined;
  prosody: EndProsody | undefined;
}

/**
 * Weights of the completion log-odds z, fitted by logistic regression on the utterance ends of the
 * project's turn-taking set (bench/turns.ts, espeak-ng voices; bench/lib/turns-fit.ts) and checked
 * on the held-out flite set. The words' weight is configured (turn.endOfTurnLmWeight): it depends
 * on how right the recognizer's words are.
 */
export const EVIDENCE_WEIGHTS = {
  /** Log-odds of a complete turn with neutral evidence (no fall, no rise, P(</s>) at LM_REF). */
  bias: -0.58,
  /** Per semitone of final pitch fall beyond the first (a statement's final fall ends turns). */
  fall: 1.43,
  /** Per 10 semitones/s of rising pitch at the end (a question's final rise). */
  rise: 1.65,
};
/** log10 P(</s>) counted as neutral evidence. */
export const LM_REF = -1;

/** The log-odds that the turn is complete as the silence begins, before this caller's own shift. */
export function completionLogOdds(e: TurnEvidence, turn: TurnTakingConfig, w = EVIDENCE_WEIGHTS): number {
  let z = w.bias;
  if (e.lmEnd !== undefined && turn.endOfTurnLmWeight > 0)
    z += turn.endOfTurnLmWeight * (Math.max(-3, Math.log10(e.lmEnd)) - LM_REF);
  const p = e.prosody;
  if (turn.endOfTurnProsody && p) {
    // Level or slightly falling pitch and small rises are what a voice does mid-sentence too.
    z += w.fall * Math.max(0, -p.f0EndSt - 1) + w.rise * Math.max(0, p.f0SlopeStPerS / 10);
  }
  return z;
}

/** Φ⁻¹ (Acklam's rational approximation; relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  if (p <= 0) return Number.NEGATIVE_INFINITY;
  if (p >= 1) return Number.POSITIVE_INFINITY;
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

const logit = (p: number) => Math.log(p / (1 - p));

/**
 * The silence after which a turn with completion log-odds `z` is confirmed, ms: where the odds,
 * raised by a silence that a pause of this caller would rarely last, reach the confidence.
 */
export function turnEndWaitMs(z: number, pause: PauseModel, turn: TurnTakingConfig): number {
  // The survival S(s) of a mid-turn pause the silence must outlast.
  const survival = Math.exp(z + pause.shift - logit(turn.endOfTurnConfidence));
  const raw = survival >= 1 ? 0 : Math.exp(pause.mu + pause.sigma * normalQuantile(1 - survival));
  return Math.round(Math.min(turn.maxEndOfTurnMs, Math.max(turn.minEndOfTurnMs, raw)));
}

/** How long an undecided onset may hold a confirmed end of turn back: longer than any VAD verdict. */
const ONSET_WAIT_MAX_MS = 300;
/** How often a held end of turn looks again whether the onset became speech or died away. */
const ONSET_RECHECK_MS = 20;

/** One utterance end's decision, for the log. */
export interface TurnEndDecision {
  text: string;
  lmEnd: number | undefined;
  prosody: EndProsody | undefined;
  logOdds: number;
  pause: PauseModel;
  waitMs: number;
  /** Of the wait, what was added because the caller's onsets are heard late over their room, ms. */
  onsetMaskMs: number;
  /** Silence already past when the words arrived and the wait was chosen, ms. */
  decidedAfterMs: number;
}

export interface TurnEndHost {
  /** Someone is speaking: their speech decides what becomes of the turn, not this wait. */
  speaking(): boolean;
  /** Sound the VAD has not yet called speech: the caller may be going on. */
  onsetPending(): boolean;
  /** The caller's turn is over. */
  confirm(): void;
  /** The wait was chosen (for the log). */
  decided?(d: TurnEndDecision): void;
}

export interface TurnEndInputs {
  /** Clock time of the end of the utterance's speech. */
  speechEndAt: number;
  prosody: EndProsody | undefined;
  /** The speaker's pause model as the utterance ended. */
  pause: PauseModel;
  /** How much later their onsets are heard over their room than in a quiet one, ms (added to the wait). */
  onsetMaskMs?: number;
  completion: TurnCompletionModel | undefined;
}

/**
 * The wait after one utterance before its turn is confirmed: chosen from its evidence once its
 * words arrive, or without them once they are known to have failed (until then, and if no answer
 * comes, the long wait holds), and never over while the caller audibly starts again.
 */
export class TurnEndWait {
  readonly #clock: Clock;
  readonly #turn: TurnTakingConfig;
  readonly #host: TurnEndHost;
  readonly #in: TurnEndInputs;
  #timer: TimerHandle | undefined;
  #done = false;
  /** When confirming was first put off because the caller seemed to be starting again. */
  #onsetWaitFrom: number | undefined;

  constructor(clock: Clock, turn: TurnTakingConfig, inputs: TurnEndInputs, host: TurnEndHost) {
    this.#clock = clock;
    this.#turn = turn;
    this.#host = host;
    this.#in = inputs;
    this.#confirmAfter(turn.maxEndOfTurnMs + (inputs.onsetMaskMs ?? 0));
  }

  /** The utterance's words (or the failure to get them). */
  recognized(text: string, failed: boolean): void {
    if (this.#done) return;
    if (failed) {
      // Weighed without its words (the voice's end, this caller's pauses): the caller may be
      // pausing mid-sentence, and the apology at the shortest wait cut them off (the hosted
      // service's 503s over the noisy set, "The front light … only works now and then").
      this.#decide("", undefined);
      return;
    }
    // No words at all was noise, which is dropped when confirmed, so the long wait costs nothing
    // and lets speech that follows merge.
    if (!text.trim()) return;
    const lmEnd = this.#in.completion?.endProbability(text);
    if (lmEnd instanceof Promise)
      void lmEnd.then(
        (p) => this.#decide(text, p),
        () => this.#decide(text, undefined),
      );
    else this.#decide(text, lmEnd);
  }

  /** The caller went on, or the call ended: no confirmation. */
  cancel(): void {
    this.#done = true;
    this.#clock.clearTimeout(this.#timer);
  }

  #decide(text: string, lmEnd: number | undefined): void {
    if (this.#done) return;
    const { prosody, pause } = this.#in;
    const logOdds = completionLogOdds({ lmEnd, prosody }, this.#turn);
    const onsetMaskMs = this.#in.onsetMaskMs ?? 0;
    const waitMs = turnEndWaitMs(logOdds, pause, this.#turn) + onsetMaskMs;
    const decidedAfterMs = Math.round(this.#clock.now() - this.#in.speechEndAt);
    this.#host.decided?.({ text, lmEnd, prosody, logOdds, pause, waitMs, onsetMaskMs, decidedAfterMs });
    this.#confirmAfter(waitMs);
  }

  /** Confirms once `ms` of silence have passed since the speech ended (at once if they have). */
  #confirmAfter(ms: number): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = this.#clock.setTimeout(
      () => this.#confirm(),
      ms - (this.#clock.now() - this.#in.speechEndAt),
    );
  }

  #confirm(): void {
    const clock = this.#clock;
    clock.clearTimeout(this.#timer);
    if (this.#done || this.#host.speaking()) return;
    if (this.#host.onsetPending()) {
      // The caller may be going on: sound is arriving that the VAD has not yet called speech (it
      // does so only 100–150 ms after the onset). Answering now would talk over them, so wait for
      // the VAD's verdict: speech-start drops this turn, anything else confirms it.
      this.#onsetWaitFrom ??= clock.now();
      if (clock.now() - this.#onsetWaitFrom < ONSET_WAIT_MAX_MS) {
        this.#timer = clock.setTimeout(() => this.#confirm(), ONSET_RECHECK_MS);
        return;
      }
    }
    this.#done = true;
    this.#host.confirm();
  }
}
