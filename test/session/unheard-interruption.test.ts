// Talk over the agent held for its words that brings none, on the real CallSession in virtual time
// with the caller's audio synthesized (voice-signals.ts) and the voice detector scripted. The
// recognizer is scripted to hear no words: the embedded one hears none in some interruptions 10 dB
// over a street. Whether the agent goes on then depends on whose the talk was: the caller's own
// voice (known from a question of theirs, its pitch learned) stops it and is asked again; a voice
// of another pitch, or one before any words of the caller's were heard, lets it go on.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { SPOKE_THROUGH_MS } from "../../src/session/interruptions.ts";
import { noise } from "../helpers/noise.ts";
import { droneSignal, mixAt, voiceSignal } from "../helpers/voice-signals.ts";
import { Harness, lineCarrying } from "./harness.ts";

const RATE = 16000;
const at = (ms: number) => Math.round((ms * RATE) / 1000);
const REPLY = "Here is a long answer with many words that takes some seconds to say and more and more.";
/** The caller's pitch, Hz, and another's an octave above it. */
const CALLER_F0 = 115;
const OTHER_F0 = 230;

/** A voice of pitch `f0` at `fromMs` on the stream, `ms` long. */
const voice = (fromMs: number, ms: number, f0: number, seed: number) => ({
  pcm: voiceSignal({ rate: RATE, ms, dbfs: -20, f0, seed, pauseShare: 0 }),
  at: at(fromMs),
});

const outcomes = (h: Harness) => h.events().flatMap((e) => (e.type === "barge-in" ? [e.outcome] : []));
const apologies = (h: Harness) =>
  h.events().filter((e) => e.type === "assistant" && e.generated.startsWith("Sorry"));

/** An engine droning in the caller's pitch at `fromMs` on the stream, `ms` long, as loud as their voice. */
const engine = (fromMs: number, ms: number) => ({
  pcm: droneSignal({ rate: RATE, ms, f0: CALLER_F0 }),
  at: at(fromMs),
});

/**
 * A caller who asks at 1 s (recognized as `question`), then at 4 s talks over the answer for 1.4 s
 * in a voice of pitch `overF0` (or a sound of theirs: `over`), in which the recognizer hears no words.
 */
async function talkOverTheAnswer(
  question: string,
  overF0: number,
  over = voice(4000, 1400, overF0, 43),
): Promise<Harness> {
  const h = new Harness(new VirtualClock(), { greeting: "" });
  h.callerAudio = lineCarrying(
    mixAt([{ pcm: noise(12_000, RATE, { dbfs: -60, seed: 41 }) }, voice(1000, 1200, CALLER_F0, 42), over]),
  );
  h.asrAnswers = [question, ""];
  h.defaultReply = [{ text: REPLY }];
  h.start();
  await h.run(1100);
  await h.say(1150, 250);
  await h.untilAgentStarts(3000);
  expect(h.clock.now()).toBeLessThan(4000);
  await h.run(4100 - h.clock.now());
  await h.say(1400, 200);
  await h.untilAgentSilent(10_000);
  return h;
}

describe("talk over the agent in which no words were heard", () => {
  it("stops the agent when it was the caller's own voice, and asks them to say it again", async () => {
    const h = await talkOverTheAnswer("tell me everything", CALLER_F0);
    expect(outcomes(h)).toEqual(["interrupted"]);
    expect(h.historyOf("assistant").at(-1)).not.toBe(REPLY);
    expect(apologies(h)).toHaveLength(1);
    const [stood] = h.logLines(
      "no words made out in the caller's own voice over the agent: the interruption stands",
    );
    expect(stood?.ownVoiceMs).toBeGreaterThanOrEqual(SPOKE_THROUGH_MS);
  });

  it("lets the agent go on when it was a voice of another pitch", async () => {
    const h = await talkOverTheAnswer("tell me everything", OTHER_F0);
    expect(outcomes(h)).toEqual(["resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(apologies(h)).toHaveLength(0);
  });

  it("lets the agent go on over an engine's drone in the caller's pitch", async () => {
    const h = await talkOverTheAnswer("tell me everything", CALLER_F0, engine(4000, 1400));
    expect(outcomes(h)).toEqual(["resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(apologies(h)).toHaveLength(0);
  });

  it("lets the agent go on when no words of the caller's were heard before", async () => {
    // Over the greeting: nothing tells the caller's voice from the room's yet.
    const h = new Harness(new VirtualClock(), { greeting: REPLY });
    h.callerAudio = lineCarrying(
      mixAt([{ pcm: noise(12_000, RATE, { dbfs: -60, seed: 41 }) }, voice(1500, 1400, CALLER_F0, 43)]),
    );
    h.asrAnswers = [""];
    h.start();
    await h.untilAgentStarts(3000);
    expect(h.clock.now()).toBeLessThan(1500);
    await h.run(1600 - h.clock.now());
    await h.say(1400, 200);
    await h.untilAgentSilent(10_000);
    expect(outcomes(h)).toEqual(["resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(apologies(h)).toHaveLength(0);
  });
});
