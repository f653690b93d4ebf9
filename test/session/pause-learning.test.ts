// What a caller's silences teach their wait, on the real CallSession in virtual time with the
// voice detector scripted. A pause of theirs moves the wait (pause-profile.ts); a silence after a
// blip of speech (a talker's syllable behind them, a click) does not, nor one inside speech that
// began over the agent (a voice held over the greeting, perhaps not the caller's at all).
import { beforeAll, describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { Harness, startedHarness } from "./harness.ts";

const WORDS = "the front light only works now and then";

/** How long after the end of the caller's last words (`words`, ms long) the agent began to answer. */
async function answerAfter(h: Harness, words: number): Promise<number> {
  // Words the completion model is unsure end a sentence: the wait is the pause model's, not its floor.
  h.endProbability = () => 0.1;
  // (A recognition opens as speech starts: one opened before this call has its words already.)
  if (h.asrAnswers.length === 0) h.asrAnswers = [WORDS];
  const starts = h.transport.speechStarts.length;
  const end = h.clock.now() + words;
  await h.say(words);
  await h.untilAgentStarts(5000);
  expect(h.transport.speechStarts.length).toBe(starts + 1);
  return h.clock.now() - end;
}

describe("the caller's pauses, learned within the call", () => {
  /** The wait after a first phrase, in a call that has taught it nothing. */
  let untaught: number;
  beforeAll(async () => {
    untaught = await answerAfter(await startedHarness(), 1500);
  });

  it("a blip of speech and the silence after it leave the wait as it was", async () => {
    const h = await startedHarness();
    h.asrAnswers = ["uh"];
    await h.say(60, 0); // 60 ms heard, then a silence of 100 ms before the caller's words
    await h.run(100);
    expect(await answerAfter(h, 1500)).toBe(untaught);
  });

  it("a real pause of the caller's does move it", async () => {
    const h = await startedHarness();
    h.asrAnswers = ["the front light"];
    await h.say(700, 0);
    await h.run(100);
    expect(await answerAfter(h, 1500)).toBeLessThan(untaught);
  });

  it("nor does a silence inside speech that began over the greeting", async () => {
    const h = new Harness(new VirtualClock(), {
      greeting: "Thanks for calling Acme Bikes, where every bike is checked twice. How can I help you today?",
    });
    h.start();
    await h.untilAgentStarts();
    h.asrAnswers = ["and on", WORDS];
    await h.say(4700, 0); // a voice held over the greeting, then 32 ms of silence
    await h.run(32);
    expect(await answerAfter(h, 1500)).toBe(untaught);
  });
});
