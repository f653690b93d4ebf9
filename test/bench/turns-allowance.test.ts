// The turn-taking cases under a slower service: their timelines wait for the agent (cues) instead
// of counting on it being as fast as a local service, and the offline gate's replay of them.
import { describe, expect, it } from "vitest";
import { heardAsPlanned, onStreamCase, withAllowance } from "../../bench/lib/turns-allowance.ts";
import type { TurnCase } from "../../bench/lib/turns-cases.ts";

const RATE = 8000;

/** An over-the-reply case: a question at 4.2–6.2 s, a sound 3 s after it (its samples mark where they came from). */
function overReply(): TurnCase {
  const caller = Int16Array.from({ length: 11 * RATE }, (_, i) => 1 + (i % 1000));
  return {
    id: "interrupt-1",
    category: "interrupt",
    text: "Wait.",
    voice: "v",
    speed: 1,
    over: "reply",
    caller,
    startMs: 9200,
    endMs: 10_000,
    questionStartMs: 4200,
    questionEndMs: 6200,
    agentMs: 2100,
    maxSeconds: 14,
  };
}

describe("turn cases under a slower service", () => {
  it("wait for the greeting to end before the question, and for the reply before the sound", () => {
    const c = overReply();
    expect(withAllowance(c, { leadMs: 0, replyMs: 0 })).toBe(c);
    const slow = withAllowance(c, { leadMs: 750, replyMs: 1700 });
    expect(slow.caller).toBe(c.caller);
    // Meanwhile the room after the sound plays (before it, a "Hello?" of --hello's may be).
    const room = { fillFromMs: 10_300, fillToMs: 11_000 };
    expect(slow.cues).toEqual([
      { atMs: 4200, agentQuietMs: 800, ...room, maxHoldMs: 10_000 },
      { atMs: 9200, agentHeardMs: 2100, ...room, maxHoldMs: 20_000 },
    ]);
    // With no room after the sound, the room before the cue.
    const short = withAllowance(
      { ...c, caller: c.caller.subarray(0, 10_500 * 8) },
      { leadMs: 750, replyMs: 1700 },
    );
    expect(short.cues?.map((q) => [q.fillFromMs, q.fillToMs])).toEqual([
      [3200, undefined],
      [8200, undefined],
    ]);
    expect(slow.maxSeconds).toBe(14 + 30);
  });

  it("moves the labels onto the stream by the holds before them", () => {
    const moved = onStreamCase(overReply(), [
      { atMs: 4200, heldMs: 600 },
      { atMs: 9200, heldMs: 1000 },
    ]);
    expect(moved).toMatchObject({
      questionStartMs: 4800,
      questionEndMs: 6800,
      startMs: 10_800,
      endMs: 11_600,
    });
  });

  it("replays the timeline offline with the agent as late as the allowance says", () => {
    const c = overReply();
    const a = { leadMs: 750, replyMs: 1700 };
    const planned = heardAsPlanned(withAllowance(c, a), a);
    expect(planned.cues).toBeUndefined();
    // The question waits for the greeting's end, 750 ms later; the sound for the reply, 1.7 s later still.
    expect(planned.questionStartMs).toBe(4200 + 760);
    expect(planned.startMs).toBe(9200 + 760 + 1700);
    // From the sound on, the timeline as it was.
    const at = (planned.startMs * RATE) / 1000;
    expect(Array.from(planned.caller.subarray(at + 80, at + 800))).toEqual(
      Array.from(c.caller.subarray(9200 * 8 + 80, 9200 * 8 + 800)),
    );
  });
});
