// The session's turn-taking settings from the program's configuration. One choice is made here
// rather than in the session: how much the caller's words may count towards the end of a turn
// depends on who recognizes them (see `lmWeightFor`).
import { type Config, usesLocalService } from "./config.ts";
import { DEFAULT_SESSION_CONFIG, type TurnTakingConfig } from "./session/config.ts";

/**
 * Weight of the language model's evidence when the words are right: fitted on the project's
 * turn-taking set with its true transcripts (bench/lib/turns-fit.ts), per decade of P(</s>).
 */
export const LM_WEIGHT_TRUE_WORDS = 1.3;

/**
 * "auto": the embedded PocketSphinx decodes each utterance with the same trigram model and a
 * forced sentence end, so its words end the way sentences end whatever the caller said (on the
 * project set P(</s>) of its hypotheses told pauses from turn ends worse than a constant): their
 * weight is 0 and the model is not even loaded. Any other recognizer (a hosted service, an ASR
 * upstream) gets the weight fitted on true words.
 */
export function lmWeightFor(config: Config): number {
  const w = config.agent.endOfTurnLmWeight;
  if (w !== "auto") return w;
  const pocketSphinx =
    usesLocalService(config) && !config.local.asrUpstream && config.local.engineProfile === "standard";
  return pocketSphinx ? 0 : LM_WEIGHT_TRUE_WORDS;
}

export function turnTakingFrom(config: Config): TurnTakingConfig {
  const a = config.agent;
  const lmWeight = lmWeightFor(config);
  return {
    ...DEFAULT_SESSION_CONFIG.turn,
    minEndOfTurnMs: a.minEndOfTurnMs,
    maxEndOfTurnMs: a.maxEndOfTurnMs,
    bargeInMinMs: a.bargeInMinMs,
    bargeInConfirmMs: a.bargeInConfirmMs,
    endOfTurnConfidence: a.endOfTurnConfidence,
    endOfTurnLm: lmWeight > 0 && a.endOfTurnLm !== "off" ? a.endOfTurnLm : undefined,
    endOfTurnLmWeight: lmWeight,
    endOfTurnProsody: a.endOfTurnProsody,
    adaptToCaller: a.adaptToCaller,
  };
}
