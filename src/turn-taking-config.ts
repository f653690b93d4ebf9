// The session's turn-taking settings from the program's configuration.
import type { Config } from "./config.ts";
import { DEFAULT_SESSION_CONFIG, type TurnTakingConfig } from "./session/config.ts";

export function turnTakingFrom(config: Config): TurnTakingConfig {
  const a = config.agent;
  return {
    ...DEFAULT_SESSION_CONFIG.turn,
    minEndOfTurnMs: a.minEndOfTurnMs,
    maxEndOfTurnMs: a.maxEndOfTurnMs,
    bargeInMinMs: a.bargeInMinMs,
    bargeInConfirmMs: a.bargeInConfirmMs,
    endOfTurnConfidence: a.endOfTurnConfidence,
    endOfTurnLm: a.endOfTurnLm === "off" ? undefined : a.endOfTurnLm,
    endOfTurnLmWeight: a.endOfTurnLmWeight,
    endOfTurnProsody: a.endOfTurnProsody,
    adaptToCaller: a.adaptToCaller,
  };
}
