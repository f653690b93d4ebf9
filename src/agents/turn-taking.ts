// The session's turn-taking settings from an agent's.
import type { Agent } from "../config/agent.ts";
import { DEFAULT_SESSION_CONFIG, type TurnTakingConfig } from "../session/config.ts";

export function turnTakingFrom(a: Agent): TurnTakingConfig {
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
    callerLevelGate: a.callerLevelGate,
    noiseSuppression: a.noiseSuppression,
  };
}
