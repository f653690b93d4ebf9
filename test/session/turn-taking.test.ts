// Turn-taking of the real CallSession on virtual time: the wait chosen from the probability that
// the turn is complete, early answers that stay unheard through a pause, each caller's pauses
// learned within the call, and barge-ins that span a comma's pause. The completion model is
// scripted (the harness's), so nothing depends on what a real recognizer heard.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { HARNESS_TURN, Harness, startedHarness } from "./harness.ts";

const started = startedHarness;

/** The end-of-turn delay filed with the last reply. */
function lastEou(h: Harness): number | undefined {
  const turn = h.events().findLast((e) => e.type === "assistant");
  return turn?.type === "assistant" ? turn.metrics.eouDelayMs : undefined;
}

/** The caller says one complete utterance whose words end a sentence with probability `p`. */
async function turnWith(p: number): Promise<number> {
  const h = await started();
  h.asrAnswers = ["some words"];
  h.endProbability = () => p;
  await h.say(900);
  await h.untilAgentSilent();
  expect(h.completionAsked).toEqual(["some words"]);
  return lastEou(h)!;
}

describe("turn-taking", () => {
  it("waits the shorter the likelier the words end the turn, continuously between the bounds", async () => {
    const sure = await turnWith(0.999);
    const unsure = await turnWith(0.3);
    const unfinished = await turnWith(0.01);
    expect(sure).toBeLessThan(HARNESS_TURN.minEndOfTurnMs + 60);
    expect(unfinished).toBeGreaterThanOrEqual(HARNESS_TURN.maxEndOfTurnMs);
    // Neither of two fixed values: in between, and clearly apart from both.
    expect(unsure).toBeGreaterThan(sure + 150);
    expect(unsure).toBeLessThan(unfinished - 150);
  });

  it("prepares an early answer in a pause but lets no audio out when the caller goes on", async () => {
    const h = await started();
    h.asrAnswers = ["i was wondering if", "i was wondering if you sell helmets"];
    h.endProbability = (words) => (words.endsWith("if") ? 0.02 : 0.99);
    h.chatReplies = [[{ text: "Wrong answer." }], [{ text: "Yes, we sell helmets." }]];
    const played = h.transport.played.length;
    await h.say(900);
    await h.run(300); // 400 ms into the pause: the answer to the first words is being prepared
    expect(h.chatRequests.length).toBe(1); // the early answer (the greeting is fixed words)
    await h.run(400); // an 800 ms pause in all
    expect(h.transport.played.length).toBe(played); // not one frame of agent audio
    await h.say(1200);
    await h.untilAgentSilent();
    expect(h.transport.clears).toBe(0);
    expect(h.historyOf("user")).toEqual(["i was wondering if you sell helmets"]);
    expect(h.historyOf("assistant")).toEqual(["Hello.", "Yes, we sell helmets."]);
    // The early answer's chat was thrown away and counted; the whole utterance's was used.
    expect(h.speculation).toEqual([
      { used: false, chatRequests: 1 },
      { used: true, chatRequests: 1 },
    ]);
  });

  it("waits longer for a caller who has paused long mid-sentence, within the bound", async () => {
    const fresh = await turnWith(0.3);
    const h = await started();
    // Twice the caller stops for ~1 s mid-sentence and goes on.
    h.endProbability = (words) => (words.endsWith("and") ? 0.001 : 0.3);
    h.asrAnswers = ["first part and", "first part and", "first part and second part"];
    await h.say(900);
    await h.run(900);
    await h.say(900);
    await h.run(900);
    await h.say(900);
    await h.untilAgentSilent();
    const adapted = lastEou(h)!;
    expect(adapted).toBeGreaterThan(fresh + 100);
    expect(adapted).toBeLessThanOrEqual(HARNESS_TURN.maxEndOfTurnMs + 20);
  });

  it("answers sooner a caller whose silences have always ended their turn, within the bound", async () => {
    const fresh = await turnWith(0.3);
    const h = await started();
    h.endProbability = (words) => (words === "unsure" ? 0.3 : 0.999);
    for (let i = 0; i < 6; i++) {
      h.asrAnswers = ["sure"];
      await h.say(700);
      await h.untilAgentSilent();
    }
    h.asrAnswers = ["unsure"];
    await h.say(700);
    await h.untilAgentSilent();
    const adapted = lastEou(h)!;
    expect(adapted).toBeLessThan(fresh - 50);
    expect(adapted).toBeGreaterThanOrEqual(HARNESS_TURN.minEndOfTurnMs);
  });
});

describe("barge-in across a short gap", () => {
  async function overTheReply(parts: number[], gapMs: number): Promise<Harness> {
    const h = await started();
    h.asrAnswers = ["tell me everything", "stop that is wrong"];
    h.chatReplies = [
      [{ text: "Here is a long answer with many words in it that goes on and on for a while." }],
    ];
    await h.say(800);
    await h.untilAgentStarts();
    await h.run(1500); // well into the reply: talking over it, not going on after a pause
    for (const [i, ms] of parts.entries()) {
      if (i > 0) await h.run(gapMs);
      await h.say(ms);
    }
    await h.untilAgentSilent();
    return h;
  }

  it("takes speech that goes on after a comma's pause for one interruption", async () => {
    // 500 ms, a pause the VAD ends speech at, 500 ms: each part alone would be a backchannel.
    const h = await overTheReply([500, 500], 150);
    const barges = h.events().filter((e) => e.type === "barge-in");
    expect(barges.map((e) => e.type === "barge-in" && e.outcome)).toEqual(["interrupted"]);
    expect(h.historyOf("user").at(-1)).toBe("stop that is wrong");
  });

  it("takes speech that goes on soon after the agent resumed from the pause for the same interruption", async () => {
    // A longer pause (a loud room hears a comma's pause end sooner and the voice start again
    // later): the agent resumes after the first part, then the second part continues it.
    const h = await overTheReply([500, 500], 550);
    const barges = h.events().filter((e) => e.type === "barge-in");
    expect(barges.map((e) => e.type === "barge-in" && e.outcome)).toEqual(["resumed", "interrupted"]);
    expect(h.historyOf("user").at(-1)).toBe("stop that is wrong");
  });

  it("takes two short sounds well apart over the reply for two backchannels", async () => {
    const h = await overTheReply([500, 500], 1200);
    const barges = h.events().filter((e) => e.type === "barge-in");
    expect(barges.map((e) => e.type === "barge-in" && e.outcome)).toEqual(["resumed", "resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(
      "Here is a long answer with many words in it that goes on and on for a while.",
    );
  });

  it("still resumes after a lone backchannel, and not before the gap is over", async () => {
    const h = await overTheReply([500], 0);
    const barges = h.events().filter((e) => e.type === "barge-in");
    expect(barges.map((e) => e.type === "barge-in" && e.outcome)).toEqual(["resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(
      "Here is a long answer with many words in it that goes on and on for a while.",
    );
  });
});

describe("a caller already talking when the agent begins", () => {
  const GREETING = "Thanks for calling Acme Bikes, the shop by the river. How can I help you today?";

  /** The greeting is heard ~1 s into the call (a hosted service's); the caller says `words` from 200 ms for `ms`. */
  async function talkingFirst(words: string, ms: number): Promise<Harness> {
    const h = new Harness(new VirtualClock(), { greeting: GREETING });
    h.asrAnswers = [words];
    h.ttsOpenMs = 1000;
    h.start();
    await h.run(200);
    await h.say(ms);
    await h.untilAgentSilent();
    return h;
  }
  const outcomes = (h: Harness) => h.events().flatMap((e) => (e.type === "barge-in" ? [e.outcome] : []));

  it("does not talk over them: the greeting falls silent, and their words stop it", async () => {
    const h = await talkingFirst("hi I am calling about my order", 2600);
    expect(h.transport.clears).toBeGreaterThan(0);
    expect(outcomes(h)).toEqual(["interrupted"]);
    // What was heard of the greeting is filed as cut short; their words are answered.
    expect(h.historyOf("user")).toEqual(["hi I am calling about my order"]);
    expect(h.historyOf("assistant")[0]).not.toBe(GREETING);
  });

  it("goes on with the greeting when they stop soon after it began, and keeps their words", async () => {
    // The greeting answers them (opening.test.ts).
    const h = await talkingFirst("hello is this the bike shop", 1000);
    expect(outcomes(h)).toEqual(["resumed"]);
    expect(h.historyOf("user")).toEqual(["hello is this the bike shop"]);
  });
});
