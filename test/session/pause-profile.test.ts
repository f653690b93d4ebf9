// One caller's pause model: moves towards how they pause, a little per pause, and never far.
import { describe, expect, it } from "vitest";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { turnEndWaitMs } from "../../src/session/end-of-turn.ts";
import { MIN_PHRASE_MS, PauseProfile, POPULATION_PAUSE_MU } from "../../src/session/pause-profile.ts";

const TURN = DEFAULT_SESSION_CONFIG.turn;
/** A phrase of the caller's, not begun over the agent. */
const PHRASE = { ms: 1200, overAgent: false };

/** A caller who stops at `at` and goes on `pauseMs` later, `times` times. */
function pauses(p: PauseProfile, pauseMs: number, times: number): void {
  for (let i = 0, at = 1000; i < times; i++, at += 5000) {
    p.speechEnded(at, PHRASE);
    p.resumed(at + pauseMs);
  }
}

describe("PauseProfile", () => {
  it("starts from the population's model", () => {
    const m = new PauseProfile().model();
    expect(m.mu).toBe(POPULATION_PAUSE_MU);
    expect(m.shift).toBe(0);
  });

  it("lengthens the wait of a caller who pauses long and often, within bounds", () => {
    const p = new PauseProfile();
    const waits = [turnEndWaitMs(0, p.model(), TURN)];
    for (let i = 0; i < 30; i++) {
      pauses(p, 1100, 1);
      waits.push(turnEndWaitMs(0, p.model(), TURN));
    }
    expect(waits[1]!).toBeGreaterThan(waits[0]!);
    for (let i = 1; i < waits.length; i++) expect(waits[i]!).toBeGreaterThanOrEqual(waits[i - 1]!);
    const m = p.model();
    expect(m.mu).toBeLessThanOrEqual(POPULATION_PAUSE_MU + Math.log(2) + 1e-9);
    expect(m.shift).toBeGreaterThanOrEqual(-1.2);
    expect(waits.at(-1)).toBeLessThanOrEqual(TURN.maxEndOfTurnMs);
  });

  it("shortens the wait of a caller whose silences always end their turn, within bounds", () => {
    const p = new PauseProfile();
    const first = turnEndWaitMs(0, p.model(), TURN);
    for (let i = 0; i < 50; i++) {
      p.speechEnded(1000 * i, PHRASE);
      p.turnEnded();
    }
    const m = p.model();
    expect(m.shift).toBeGreaterThan(0);
    expect(m.shift).toBeLessThanOrEqual(1.2);
    const after = turnEndWaitMs(0, m, TURN);
    expect(after).toBeLessThan(first);
    expect(after).toBeGreaterThanOrEqual(TURN.minEndOfTurnMs);
  });

  it("learns short pauses as short: a caller who barely pauses waits less", () => {
    const p = new PauseProfile();
    pauses(p, 300, 4);
    expect(p.model().mu).toBeLessThan(POPULATION_PAUSE_MU);
    expect(p.model().mu).toBeGreaterThanOrEqual(POPULATION_PAUSE_MU - Math.log(2));
  });

  it("keeps the population's model when adaptation is off", () => {
    const p = new PauseProfile(false);
    pauses(p, 1100, 5);
    expect(p.model()).toEqual(new PauseProfile().model());
  });

  it("counts a pause once, and only after a speech end", () => {
    const p = new PauseProfile();
    p.resumed(500); // no speech end before it
    p.speechEnded(1000, PHRASE);
    p.resumed(1600);
    p.resumed(2000); // the same pause again
    expect(p.pauses).toBe(1);
  });

  it("learns nothing from the silence after a blip, or in an utterance begun over the agent", () => {
    const p = new PauseProfile();
    p.speechEnded(1000, { ms: MIN_PHRASE_MS - 1, overAgent: false }); // a talker's syllable
    p.resumed(1096);
    p.speechEnded(5000, { ms: 4700, overAgent: true }); // held over the greeting
    p.resumed(5032);
    expect(p.pauses).toBe(0);
    expect(p.model()).toEqual(new PauseProfile().model());
    p.speechEnded(9000, { ms: MIN_PHRASE_MS, overAgent: false });
    p.resumed(9300);
    expect(p.pauses).toBe(1);
  });
});
