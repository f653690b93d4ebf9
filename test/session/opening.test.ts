// Words said before the agent's greeting is heard (opening.ts): short ones are answered by the
// greeting, which plays whole after them in the history; a request said whole before it, and
// anything said once it was heard, is answered. Real CallSession on virtual time; the recognizer's
// words are scripted, so nothing depends on what a real recognizer heard.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";
import { Harness, lineCarrying } from "./harness.ts";

const GREETING = "Thanks for calling Acme Bikes, the shop by the river. How can I help you today?";

/** The greeting is heard `greetingMs` into the call; the caller says `words` from 200 ms for `ms`. */
async function sayFirst(words: string, ms: number, greetingMs = 1000): Promise<Harness> {
  const h = new Harness(new VirtualClock(), { greeting: GREETING });
  h.asrAnswers = [words];
  h.ttsOpenMs = greetingMs;
  h.start();
  await h.run(200);
  await h.say(ms);
  await h.untilAgentSilent();
  return h;
}

describe("words said before the greeting is heard", () => {
  it("a short one is answered by the greeting: heard whole after it, and no reply of its own", async () => {
    const h = await sayFirst("hello", 600);
    expect(h.transport.clears).toBe(0);
    expect(h.chatRequests).toHaveLength(0);
    expect(h.historyOf("assistant")).toEqual([GREETING]);
    // In the conversation before the greeting, as said.
    const roles = h.session.history.messages().flatMap((m) => (m.role === "system" ? [] : [m.role]));
    expect(roles).toEqual(["user", "assistant"]);
    expect(h.historyOf("user")).toEqual(["hello"]);
    expect(h.events().filter((e) => e.type === "user")).toHaveLength(1);
  });

  it("a short one under way as the greeting begins pauses it, which then goes on and answers it", async () => {
    const h = await sayFirst("hello is this the bike shop", 1000);
    expect(h.events().flatMap((e) => (e.type === "barge-in" ? [e.outcome] : []))).toEqual(["resumed"]);
    expect(h.chatRequests).toHaveLength(0);
    expect(h.historyOf("assistant")).toEqual([GREETING]);
    expect(h.historyOf("user")).toEqual(["hello is this the bike shop"]);
  });

  it("a request said whole before a late greeting is answered", async () => {
    const h = await sayFirst("hi I am calling about my order from last week", 2400, 4000);
    expect(h.chatRequests).toHaveLength(1);
    expect(h.historyOf("user")).toEqual(["hi I am calling about my order from last week"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Okay.");
  });

  it("short words once the greeting was heard are a turn, answered", async () => {
    const h = new Harness(new VirtualClock(), { greeting: GREETING });
    h.asrAnswers = ["yes"];
    h.ttsOpenMs = 1000;
    h.start();
    await h.untilAgentSilent();
    await h.say(400);
    await h.untilAgentSilent();
    expect(h.chatRequests).toHaveLength(1);
    expect(h.historyOf("user")).toEqual(["yes"]);
    expect(h.historyOf("assistant")).toEqual([GREETING, "Okay."]);
  });

  it("a voice that ends as the greeting's first words come does not pause them", async () => {
    // A "Hello?" from 600 to 1120 ms; the greeting is heard from ~1050 ms, and the detector calls
    // the end of the speech at 1420 ms, as Silero does ~300 ms late.
    const h = await voicedFirst("hello", 520);
    expect(h.transport.clears).toBe(0);
    expect(h.chatRequests).toHaveLength(0);
    expect(h.historyOf("assistant")).toEqual([GREETING]);
    expect(h.historyOf("user")).toEqual(["hello"]);
  });

  it("a voice that goes on as the greeting's first words come pauses them, and interrupts", async () => {
    const h = await voicedFirst("hi I am calling about my order", 2000);
    expect(h.transport.clears).toBeGreaterThan(0);
    expect(h.chatRequests).toHaveLength(1);
    expect(h.historyOf("user")).toEqual(["hi I am calling about my order"]);
  });
});

/**
 * The caller says `words` in a voice from 600 ms for `ms` over a faint hiss; the greeting is heard
 * from ~1050 ms; the detector's speech starts 120 ms into the voice and is called to end 300 ms after it.
 */
async function voicedFirst(words: string, ms: number): Promise<Harness> {
  const RATE = 16000;
  const at = (t: number) => Math.round((t * RATE) / 1000);
  const line = mixAt([
    { pcm: noise(ms + 4000, RATE, { dbfs: -60, seed: 31 }) },
    { pcm: voiceSignal({ rate: RATE, ms, dbfs: -20, f0: 115, seed: 32, pauseShare: 0.1 }), at: at(600) },
  ]);
  const h = new Harness(new VirtualClock(), { greeting: GREETING });
  h.callerAudio = lineCarrying(line);
  h.asrAnswers = [words];
  h.ttsOpenMs = 1050;
  h.start();
  await h.run(720);
  h.startSpeaking(0);
  await h.run(ms + 180);
  await h.stopSpeaking(0, 600 + ms);
  await h.untilAgentSilent();
  return h;
}
