// The real CallSession on virtual time with a voice in the room behind the caller: the caller's
// audio is synthesized (voice-signals.ts) and the voice detector scripted as Silero behaves with a
// talker behind the caller (in speech as long as anyone talks), so what decides is the caller-level
// gate between them (caller-voice.ts).
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";
import { Harness, lineCarrying } from "./harness.ts";

const RATE = 16000;
const at = (ms: number) => Math.round((ms * RATE) / 1000);

/** A harness whose caller line carries `pcm` (20 ms frames from the call's first), then silence. */
function harnessWith(pcm: Int16Array): Harness {
  const h = new Harness(new VirtualClock());
  h.callerAudio = lineCarrying(pcm);
  return h;
}

const hiss = (ms: number) => noise(ms, RATE, { dbfs: -60, seed: 21 });

/**
 * The caller's one question ("where are you") is answered, and nothing else happened: the greeting
 * was never stopped, and nothing but the question made a turn (one recognition).
 */
async function expectTheQuestionAloneAnswered(h: Harness): Promise<void> {
  await h.untilAgentStarts(3000);
  await h.untilAgentSilent(6000);
  expect(h.historyOf("user")).toEqual(["where are you"]);
  expect(h.historyOf("assistant")).toEqual(["Hello.", "Okay."]);
  expect(h.transport.clears).toBe(0);
  expect(h.asrStreams).toBe(1);
}

describe("a voice behind the caller", () => {
  it("does not hold the caller's turn open: it ends with their voice, and is answered", async () => {
    // A talker 16 dB below the caller from before the call to its end; the caller at 3 s.
    const room = voiceSignal({ rate: RATE, ms: 12_500, dbfs: -36, f0: 210, seed: 22 }).subarray(at(500));
    const caller = voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 115, seed: 23, pauseShare: 0.1 });
    const h = harnessWith(mixAt([{ pcm: hiss(12_000) }, { pcm: room }, { pcm: caller, at: at(3000) }]));
    h.asrAnswers = ["where are you"];
    h.start();
    await h.run(140);
    h.startSpeaking(0); // the room's talker: the detector never hears the speech end
    await h.run(2860);
    expect(h.events().filter((e) => e.type === "barge-in")).toEqual([]);
    await h.run(1500); // the caller speaks
    // The greeting was never stopped, and the room made no turn of its own.
    await expectTheQuestionAloneAnswered(h);
  });

  it('is not the caller\'s "Hello?" as the call connects: the question they ask after the greeting is answered', async () => {
    // Near silence; the caller says "Hello?" as the call connects, listens to the greeting, and asks at 3.5 s.
    const h = harnessWith(
      mixAt([
        { pcm: hiss(8000) },
        { pcm: voiceSignal({ rate: RATE, ms: 500, dbfs: -20, f0: 115, seed: 26 }) },
        {
          pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 115, seed: 27, pauseShare: 0.1 }),
          at: at(3500),
        },
      ]),
    );
    h.asrAnswers = ["where are you"];
    h.start();
    await h.run(120);
    h.startSpeaking(0);
    await h.run(680);
    await h.stopSpeaking(0, 500);
    await h.run(2820);
    h.startSpeaking(0);
    await h.run(1500);
    await h.stopSpeaking(0, 5000);
    // The "Hello?" neither stopped the greeting nor made a turn of its own.
    await expectTheQuestionAloneAnswered(h);
  });

  it("neither pauses nor stops the agent when it talks over it, once the caller has been heard", async () => {
    const h = harnessWith(
      mixAt([
        { pcm: hiss(9000) },
        { pcm: voiceSignal({ rate: RATE, ms: 1200, dbfs: -20, f0: 115, seed: 24 }), at: at(1000) },
        { pcm: voiceSignal({ rate: RATE, ms: 2000, dbfs: -32, f0: 210, seed: 25 }), at: at(3600) },
      ]),
    );
    h.asrAnswers = ["tell me everything"];
    h.defaultReply = [{ text: "Here is a long answer with many words that takes some seconds to say." }];
    h.start();
    await h.run(1100);
    h.startSpeaking(0);
    await h.run(1400);
    await h.stopSpeaking(0, 2250);
    await h.untilAgentStarts(3000);
    const clears = h.transport.clears;
    // 12 dB below the caller, over the agent's answer, for two seconds (the clock is the stream's).
    expect(h.clock.now()).toBeLessThan(3700);
    await h.run(3700 - h.clock.now());
    h.startSpeaking(0);
    await h.run(2000);
    await h.stopSpeaking(0, 5600);
    await h.untilAgentSilent(8000);
    expect(h.transport.clears).toBe(clears);
    expect(h.events().filter((e) => e.type === "barge-in")).toEqual([]);
    expect(h.historyOf("user")).toEqual(["tell me everything"]);
  });
});
