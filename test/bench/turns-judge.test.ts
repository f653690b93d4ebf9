// The turns benchmark's judge (bench/lib/turns-judge.ts) on a backchannel over the agent's reply:
// what became of talk over the agent is read from the call's record from the sound on, so the
// question cutting into a greeting a fault had made late is not taken for the backchannel's doing.
import { describe, expect, it } from "vitest";
import type { TurnCase } from "../../bench/lib/turns-cases.ts";
import { judge } from "../../bench/lib/turns-judge.ts";
import type { CallEvent } from "../../src/records/call-record.ts";
import { EARLY_ANSWER_DROPPED } from "../../src/session/early-answer-pause.ts";
import type { SimResult } from "../../tools/twilio-sim/simulate.ts";

const RATE = 8000;
const STARTED = Date.parse("2026-12-05T12:00:00.000Z");
const at = (ms: number) => new Date(STARTED + ms).toISOString();

/** The agent heard throughout the call's 20 s: a tone, loud enough to count as its speech. */
function agentAudio(ms: number): Int16Array {
  const pcm = new Int16Array((RATE * ms) / 1000);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE));
  return pcm;
}

/** "mm hmm" over the agent's reply at 12 s, the question asked first at 5 s. */
const backchannel: TurnCase = {
  id: "backchannel-1",
  category: "backchannel",
  text: "mm hmm",
  voice: "en-us",
  speed: 160,
  over: "reply",
  caller: new Int16Array(0),
  startMs: 12_000,
  endMs: 12_600,
  questionStartMs: 5_000,
  questionEndMs: 7_000,
  maxSeconds: 20,
};

function call(events: CallEvent[], clearsMs: number[]): SimResult {
  return {
    callSid: "CA0123",
    agentAudio: agentAudio(20_000),
    clears: clearsMs,
    transcript: { startedAt: at(0), events },
  } as unknown as SimResult;
}

describe("the turns judge, talk over the agent", () => {
  it("does not count the question's interruption of a late greeting against a backchannel the agent went on over", () => {
    const events: CallEvent[] = [
      { type: "barge-in", at: at(6_100), outcome: "interrupted" },
      { type: "barge-in", at: at(13_000), outcome: "resumed" },
    ];
    const o = judge(backchannel, call(events, [5_200, 12_200]));
    expect(o.valid).toBe(true);
    expect(o.bargeIns).toEqual({ interrupted: 0, resumed: 1 });
    expect(o.falseBargeIn).toBe(false);
  });

  it("counts a backchannel that stopped the agent", () => {
    const events: CallEvent[] = [
      { type: "barge-in", at: at(6_100), outcome: "interrupted" },
      { type: "barge-in", at: at(13_000), outcome: "interrupted" },
    ];
    const o = judge(backchannel, call(events, [5_200, 12_200]));
    expect(o.valid).toBe(true);
    expect(o.falseBargeIn).toBe(true);
  });

  it("counts an early answer dropped for the sound as a stop: wrong for a backchannel, right for an interruption", () => {
    const events: CallEvent[] = [
      { type: "note", at: at(12_200), text: EARLY_ANSWER_DROPPED },
      { type: "barge-in", at: at(14_000), outcome: "resumed" }, // over the merged turn's answer, later
    ];
    expect(judge(backchannel, call(events, [12_100])).falseBargeIn).toBe(true);
    const interruption: TurnCase = {
      ...backchannel,
      id: "interrupt-1",
      category: "interrupt",
      text: "Stop.",
    };
    expect(judge(interruption, call(events, [12_100])).missed).toBe(false);
    // Dropped before the sound began (the question's own early answer): not the sound's doing.
    const before: CallEvent[] = [{ type: "note", at: at(7_900), text: EARLY_ANSWER_DROPPED }, events[1]!];
    expect(judge(interruption, call(before, [12_100])).missed).toBe(true);
  });
});

/** `pcm` with its audio from `fromMs` to `toMs` silenced (the agent paused there). */
function silenced(pcm: Int16Array, fromMs: number, toMs: number): Int16Array {
  const out = pcm.slice();
  out.fill(0, (RATE * fromMs) / 1000, (RATE * toMs) / 1000);
  return out;
}

describe("the turns judge, the room's pauses of the agent", () => {
  it("times a pause while the caller was silent to the agent heard again, and leaves out the caller's", () => {
    const sim = call([], [3_000, 5_200, 12_200]);
    sim.agentAudio = silenced(silenced(sim.agentAudio, 3_000, 3_700), 12_200, 13_000);
    expect(judge(backchannel, sim).roomPauses).toEqual([700]);
  });

  it("counts a pause the agent was not heard again after, before the caller spoke, as a stop", () => {
    const sim = call([], [3_000, 3_100]);
    sim.agentAudio = silenced(sim.agentAudio, 3_000, 5_000);
    expect(judge(backchannel, sim).roomPauses).toEqual([null]);
  });

  it("leaves out a pause while the agent was silent anyway", () => {
    const sim = call([], [3_000]);
    sim.agentAudio = silenced(sim.agentAudio, 2_500, 3_400);
    expect(judge(backchannel, sim).roomPauses).toEqual([]);
  });
});
