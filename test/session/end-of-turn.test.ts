// The end-of-turn rule as numbers: the evidence's log-odds and the silence they ask for.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { DEFAULT_SESSION_CONFIG, type TurnTakingConfig } from "../../src/session/config.ts";
import {
  completionLogOdds,
  EVIDENCE_WEIGHTS,
  normalQuantile,
  TurnEndWait,
  turnEndWaitMs,
} from "../../src/session/end-of-turn.ts";
import { POPULATION_PAUSE_MU, POPULATION_PAUSE_SIGMA } from "../../src/session/pause-profile.ts";
import type { EndProsody } from "../../src/session/prosody.ts";

const TURN: TurnTakingConfig = {
  ...DEFAULT_SESSION_CONFIG.turn,
  endOfTurnLmWeight: 1.3,
  endOfTurnProsody: true,
};
const POPULATION = { mu: POPULATION_PAUSE_MU, sigma: POPULATION_PAUSE_SIGMA, shift: 0 };
const level: EndProsody = { f0SlopeStPerS: 0, f0EndSt: 0, levelEndDb: -3, voicedFrames: 40 };

describe("normalQuantile", () => {
  it("inverts the normal distribution", () => {
    expect(normalQuantile(0.5)).toBeCloseTo(0, 9);
    expect(normalQuantile(0.975)).toBeCloseTo(1.959964, 5);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.326348, 5);
    expect(normalQuantile(1e-6)).toBeCloseTo(-4.753424, 4);
  });
});

describe("turnEndWaitMs", () => {
  it("shortens continuously as the turn looks more complete, between the configured bounds", () => {
    const waits = Array.from({ length: 241 }, (_, i) => turnEndWaitMs(-6 + i * 0.05, POPULATION, TURN));
    expect(waits[0]).toBe(TURN.maxEndOfTurnMs);
    expect(waits.at(-1)).toBe(TURN.minEndOfTurnMs);
    for (let i = 1; i < waits.length; i++) expect(waits[i]!).toBeLessThanOrEqual(waits[i - 1]!);
    // Not two values but a range: many waits strictly between the bounds, no jump between them.
    const between = waits.filter((w) => w > TURN.minEndOfTurnMs && w < TURN.maxEndOfTurnMs);
    expect(new Set(between).size).toBeGreaterThan(20);
    for (let i = 1; i < waits.length; i++) expect(waits[i - 1]! - waits[i]!).toBeLessThan(40);
  });

  it("waits longer when more confidence is asked for", () => {
    const at = (c: number) => turnEndWaitMs(0, POPULATION, { ...TURN, endOfTurnConfidence: c });
    expect(at(0.8)).toBeLessThan(at(0.9));
    expect(at(0.9)).toBeLessThan(at(0.97));
  });

  it("waits longer for a caller whose pauses are long or frequent", () => {
    const base = turnEndWaitMs(0, POPULATION, TURN);
    expect(turnEndWaitMs(0, { ...POPULATION, mu: POPULATION.mu + 0.4 }, TURN)).toBeGreaterThan(base);
    expect(turnEndWaitMs(0, { ...POPULATION, shift: -1 }, TURN)).toBeGreaterThan(base);
    expect(turnEndWaitMs(0, { ...POPULATION, shift: 1 }, TURN)).toBeLessThan(base);
  });
});

describe("completionLogOdds", () => {
  it("rises with the probability that the sentence ends, by the configured weight", () => {
    const z = (p: number, turn = TURN) => completionLogOdds({ lmEnd: p, prosody: undefined }, turn);
    expect(z(0.3)).toBeGreaterThan(z(0.03));
    expect(z(0.3) - z(0.03)).toBeCloseTo(TURN.endOfTurnLmWeight, 6);
    // Weight 0: the words do not count; no probability counts as neutral.
    expect(z(0.3, { ...TURN, endOfTurnLmWeight: 0 })).toBe(EVIDENCE_WEIGHTS.bias);
    expect(completionLogOdds({ lmEnd: undefined, prosody: undefined }, TURN)).toBe(EVIDENCE_WEIGHTS.bias);
  });

  it("counts a final pitch fall or rise as a turn end, a level pitch not at all", () => {
    const z = (p: EndProsody, turn = TURN) => completionLogOdds({ lmEnd: undefined, prosody: p }, turn);
    expect(z(level)).toBe(EVIDENCE_WEIGHTS.bias);
    expect(z({ ...level, f0EndSt: -4, f0SlopeStPerS: -15 })).toBeGreaterThan(z(level) + 3);
    expect(z({ ...level, f0SlopeStPerS: 12 })).toBeGreaterThan(z(level) + 1.5);
    expect(z({ ...level, f0EndSt: -4 }, { ...TURN, endOfTurnProsody: false })).toBe(EVIDENCE_WEIGHTS.bias);
  });
});

describe("the wait for the end of a turn", () => {
  /** When a turn whose words arrive at once is confirmed, ms after its speech ended. */
  function confirmedAfter(onsetMaskMs: number | undefined): number {
    const clock = new VirtualClock();
    let at = Number.NaN;
    const wait = new TurnEndWait(
      clock,
      TURN,
      { speechEndAt: 0, prosody: level, pause: POPULATION, completion: undefined, onsetMaskMs },
      { speaking: () => false, onsetPending: () => false, confirm: () => (at = clock.now()) },
    );
    wait.recognized("I would like to check my order", false);
    clock.advance(3000);
    return at;
  }

  it("is longer by as much as the caller's onsets are heard late over a loud room", () => {
    const quiet = confirmedAfter(undefined);
    expect(quiet).toBe(
      turnEndWaitMs(completionLogOdds({ lmEnd: undefined, prosody: level }, TURN), POPULATION, TURN),
    );
    expect(confirmedAfter(0)).toBe(quiet);
    expect(confirmedAfter(120)).toBe(quiet + 120);
  });
});
