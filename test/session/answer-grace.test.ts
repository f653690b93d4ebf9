// When a sound over an early answer is the caller going on from their pause, and when their turn
// joins the conversation (answer-grace.ts). Whole calls through the session: call-session.test.ts.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import type { AgentTurn } from "../../src/session/agent-turn.ts";
import { answerInGrace, GraceCommit } from "../../src/session/answer-grace.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import type { SpeakerListener } from "../../src/session/speaker-listener.ts";
import type { UserTurnJob } from "../../src/session/user-turn.ts";

const T = DEFAULT_SESSION_CONFIG.turn;
const caller = {} as SpeakerListener;
const other = {} as SpeakerListener;

/** `caller`'s turn, their last word at 0, its answer first heard at `heardAt` (undefined: not yet). */
function answered(heardAt: number | undefined): { job: UserTurnJob; agent: AgentTurn } {
  const agent = { timings: { firstPlayAt: heardAt } } as unknown as AgentTurn;
  const job: UserTurnJob = {
    id: 1,
    listener: caller,
    speechEndAt: 0,
    confirmed: true,
    source: "speech",
    turn: agent,
  };
  return { job, agent };
}

describe("the grace after an early answer is first heard", () => {
  it("counts from the answer's first audio, however long the pause before it", () => {
    const { job, agent } = answered(1500); // past the longest wait for the end of a turn
    expect(answerInGrace(job, agent, caller, 1500 + T.resumeGraceMs - 1, T)).toBe(agent);
    expect(answerInGrace(job, agent, caller, 1500 + T.resumeGraceMs, T)).toBeUndefined();
  });

  it("is nobody's but the answered speaker's, and over once the turn is committed or the answer unheard", () => {
    const { job, agent } = answered(900);
    expect(answerInGrace(job, agent, other, 1000, T)).toBeUndefined();
    expect(answerInGrace(job, answered(undefined).agent, caller, 1000, T)).toBeUndefined();
    expect(
      answerInGrace({ ...job, turn: answered(undefined).agent }, agent, caller, 1000, T),
    ).toBeUndefined();
    expect(answerInGrace({ ...job, committed: true }, agent, caller, 1000, T)).toBeUndefined();
  });

  it("lets a sound not yet speech pause the answer only within the longest wait after the pause began", () => {
    const { job, agent } = answered(T.maxEndOfTurnMs - 200);
    expect(answerInGrace(job, agent, caller, T.maxEndOfTurnMs - 1, T, "onset")).toBe(agent);
    expect(answerInGrace(job, agent, caller, T.maxEndOfTurnMs, T, "onset")).toBeUndefined();
    expect(answerInGrace(job, agent, caller, T.maxEndOfTurnMs, T)).toBe(agent);
  });

  it("commits at the grace's end, held while the caller may be going on and armed again for what is left", () => {
    const clock = new VirtualClock(1000);
    const committed: number[] = [];
    const grace = new GraceCommit(clock, T.resumeGraceMs, () => committed.push(clock.now()));
    const { job } = answered(1000);
    grace.arm(job);
    clock.advance(100);
    grace.hold(); // a sound over the answer
    clock.advance(T.resumeGraceMs);
    expect(committed).toEqual([]);
    grace.arm(job); // it was a click: the grace is long over
    clock.advance(0);
    expect(committed).toEqual([1000 + 100 + T.resumeGraceMs]);
    grace.arm({ ...job, committed: true });
    clock.advance(T.resumeGraceMs);
    expect(committed).toHaveLength(1);
  });
});
