// A line's usual caller level: the median of its last calls' callers, known after a few calls,
// taught only by a caller heard for long enough to have a level.
import { describe, expect, it } from "vitest";
import {
  LINE_ABOVE_DB,
  LINE_BELOW_DB,
  LINE_CALLS,
  LINE_KNOWN_CALLS,
  LINE_LEARN_MS,
  LineHold,
  LineLevel,
  LineLevels,
  TRIAL_MS,
} from "../../src/session/line-level.ts";

describe("a line's usual caller level", () => {
  it("is the median of its calls' callers, once a few calls have taught it", () => {
    const line = new LineLevel();
    line.learn(-20, LINE_LEARN_MS);
    line.learn(-35, LINE_LEARN_MS);
    expect(LINE_KNOWN_CALLS).toBe(3);
    expect(line.usualDb()).toBeUndefined();
    line.learn(-18, LINE_LEARN_MS);
    // The one soft call (a talker taken for a silent caller, say) does not pull it down.
    expect(line.usualDb()).toBe(-20);
    line.learn(-22, LINE_LEARN_MS);
    expect(line.usualDb()).toBe(-21);
    line.learn(-19, LINE_LEARN_MS);
    expect(line.usualDb()).toBe(-20);
  });

  it("is not taught by a call whose caller said too little, or nothing", () => {
    const line = new LineLevel();
    for (let i = 0; i < LINE_KNOWN_CALLS; i++) line.learn(-20, LINE_LEARN_MS);
    line.learn(-50, LINE_LEARN_MS - 20);
    line.learn(Number.NEGATIVE_INFINITY, 500);
    expect(line.calls).toBe(LINE_KNOWN_CALLS);
    expect(line.usualDb()).toBe(-20);
  });

  it("follows its last calls: older ones are forgotten", () => {
    const line = new LineLevel();
    for (let i = 0; i < LINE_CALLS; i++) line.learn(-30, LINE_LEARN_MS);
    for (let i = 0; i < (LINE_CALLS >> 1) + 1; i++) line.learn(-15, LINE_LEARN_MS);
    expect(line.calls).toBe(LINE_CALLS);
    expect(line.usualDb()).toBe(-15);
  });

  it("is learned for each line on its own", () => {
    const lines = new LineLevels();
    for (let i = 0; i < LINE_KNOWN_CALLS; i++) lines.for("twilio").learn(-20, LINE_LEARN_MS);
    expect(lines.for("twilio").usualDb()).toBe(-20);
    expect(lines.for("sip").usualDb()).toBeUndefined();
    expect(lines.for("twilio")).toBe(lines.for("twilio"));
  });
});

describe("a call's hold on its caller's first voice", () => {
  it("raises the bar to the line's, and caps it over the line's usual caller, while the agent speaks and nobody was heard", () => {
    let agent = true;
    const hold = new LineHold({ lineDb: -20, agentSpeaking: () => agent });
    expect(hold.holds()).toBe(true);
    expect(hold.bar(-40)).toBe(-20 - LINE_BELOW_DB);
    expect(hold.bar(-19)).toBe(-19);
    expect(hold.bar(-10)).toBe(-20 + LINE_ABOVE_DB);
    agent = false;
    expect(hold.holds()).toBe(false);
    expect(hold.bar(-40)).toBe(-40);
    expect(hold.bar(-10)).toBe(-10);
    agent = true;
    hold.started(0);
    expect(hold.bar(-40)).toBe(-40);
    // A line not yet known holds nothing.
    expect(new LineHold({ agentSpeaking: () => true }).holds()).toBe(false);
  });

  it("holds a voice from its first frame over the call's own bar to the end of the detector's speech", () => {
    const hold = new LineHold({ lineDb: -20, agentSpeaking: () => true });
    expect(hold.frame(-45, -40)).toBe("no");
    expect(hold.voice).toBe(false);
    expect(hold.frame(-35, -40)).toBe("first");
    // Under the call's own bar (which the held voice raised, learned as the room's), still held.
    expect(hold.frame(-45, -30)).toBe("held");
    expect(hold.voice).toBe(true);
    hold.speechEnded();
    expect(hold.frame(-45, -30)).toBe("no");
  });

  /** `hold`'s trial over TRIAL_MS of 20 ms frames at `levels` in turn (NaN: a gap between words), from 0 ms. */
  function trialOf(hold: LineHold, levels: number[]): Array<"room" | undefined> {
    const verdicts: Array<"room" | undefined> = [];
    for (let ms = 20, i = 0; ms <= TRIAL_MS; ms += 20, i++) {
      const db = levels[i % levels.length]!;
      verdicts.push(hold.trial(Number.isNaN(db) ? -60 : db, ms, !Number.isNaN(db)));
    }
    return verdicts;
  }

  it("puts the first voice taken while it held on trial: the room's if its loud frames stay under the line's bar", () => {
    const usual = -20;
    const bar = usual - LINE_BELOW_DB;
    // A conversation at the next table: one syllable over the bar (which started it), the rest far under.
    const room = new LineHold({ lineDb: usual, agentSpeaking: () => true });
    room.started(0);
    expect(room.holds()).toBe(false);
    const roomVerdicts = trialOf(room, [
      bar + 1,
      bar - 3,
      bar - 8,
      Number.NaN,
      bar - 10,
      bar - 2,
      bar - 12,
      bar - 6,
      bar - 9,
      bar - 4,
    ]);
    expect(roomVerdicts.slice(0, -1).every((v) => v === undefined)).toBe(true); // nothing before TRIAL_MS
    expect(roomVerdicts.at(-1)).toBe("room");
    // It holds again, and the detector's speech now is a held voice.
    expect(room.holds()).toBe(true);
    expect(room.voice).toBe(true);
    expect(room.frame(-60, -40)).toBe("held");
    // The caller: their stressed syllables at the bar or over it, however soft the rest and the gaps.
    const caller = new LineHold({ lineDb: usual, agentSpeaking: () => true });
    caller.started(0);
    expect(
      trialOf(caller, [
        bar + 2,
        bar - 6,
        Number.NaN,
        bar + 1,
        bar - 9,
        bar + 3,
        bar - 5,
        bar - 8,
        bar,
        bar - 7,
      ]),
    ).not.toContain("room");
    expect(caller.holds()).toBe(false);
    // One trial per call: later speech, or speech begun when the line did not hold, is not judged.
    expect(trialOf(caller, [bar - 10])).not.toContain("room");
    const late = new LineHold({ lineDb: usual, agentSpeaking: () => false });
    late.started(0);
    expect(trialOf(late, [bar - 10])).not.toContain("room");
    // A first voice that ends before its trial is over stays the caller's.
    const short = new LineHold({ lineDb: usual, agentSpeaking: () => true });
    short.started(0);
    expect(short.trial(bar - 10, 300, true)).toBeUndefined();
    short.speechEnded();
    expect(short.trial(bar - 10, TRIAL_MS, true)).toBeUndefined();
    expect(short.holds()).toBe(false);
  });
});
