// The real CallSession on virtual time, its caller's audio synthesized (voice-signals.ts) and the
// voice detector scripted: after a caller's short talk over the agent (an "mm hmm"), the agent goes
// on as long after their voice stopped as in a quiet room, not a gap after the detector's end
// (which a loud room reports ~450 ms after the voice stops); and a caller who goes on just after it
// resumed ("Wait, | that's wrong") pauses it again as soon as they are heard.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { QUIET_END_CALLED_MS } from "../../src/session/barge-ins.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";
import { Harness, lineCarrying } from "./harness.ts";

const RATE = 16000;
const at = (ms: number) => Math.round((ms * RATE) / 1000);
const GAP_MS = DEFAULT_SESSION_CONFIG.turn.bargeInGapMs;

/** The caller's voice (the same pitch throughout) at `fromMs`, `ms` long. */
const voice = (fromMs: number, ms: number, seed: number) => ({
  pcm: voiceSignal({ rate: RATE, ms, dbfs: -20, f0: 115, seed, pauseShare: 0 }),
  at: at(fromMs),
});

/**
 * A caller who asks at 1 s, and talks over the long answer with `over` (their voice's stretches,
 * [from, to] ms on the stream), over a faint hiss.
 */
async function overTheAnswer(over: Array<[number, number]>): Promise<Harness> {
  const h = new Harness(new VirtualClock(), { greeting: "" });
  h.callerAudio = lineCarrying(
    mixAt([
      { pcm: noise(12_000, RATE, { dbfs: -60, seed: 31 }) },
      voice(1000, 1200, 32),
      ...over.map(([from, to], i) => voice(from, to - from, 33 + i)),
    ]),
  );
  h.asrAnswers = ["tell me everything"];
  h.defaultReply = [
    { text: "Here is a long answer with many words that takes some seconds to say and more." },
  ];
  h.start();
  await h.run(1100);
  await h.say(1150, 250);
  await h.untilAgentStarts(3000);
  expect(h.clock.now()).toBeLessThan(over[0]![0]);
  await h.run(over[0]![0] - h.clock.now());
  return h;
}

/** When the agent was next heard after clock time `t`. */
const nextStart = (h: Harness, t: number) => h.transport.speechStarts.find((s) => s > t);

describe("the agent after a caller's short talk over it", () => {
  it("goes on as long after their voice stopped as in a quiet room, though the detector called the end late", async () => {
    const h = await overTheAnswer([[4000, 4500]]);
    await h.run(120);
    h.startSpeaking(0);
    // A loud room's detector: the end, at 4,660 on the stream, reported 450 ms after the voice stopped.
    await h.run(830);
    const clears = h.transport.clearTimes.length;
    expect(clears).toBeGreaterThan(0);
    const reportedAt = h.clock.now();
    await h.stopSpeaking(0, 4660);
    await h.run(600);
    const back = nextStart(h, reportedAt - 1);
    expect(back).toBeDefined();
    // Heard again the gap after a quiet room's end (the voice's last sound at 4,500, clock alike;
    // the short level lags it a little), not a gap after the late report.
    expect(back!).toBeGreaterThanOrEqual(4500 + QUIET_END_CALLED_MS + GAP_MS);
    expect(back!).toBeLessThan(4500 + QUIET_END_CALLED_MS + GAP_MS + 100);
    expect(back! - reportedAt).toBeLessThan(GAP_MS - 100);
    expect(
      h
        .events()
        .filter((e) => e.type === "barge-in")
        .map((e) => e.type === "barge-in" && e.outcome),
    ).toEqual(["resumed"]);
  });

  it("waits for the rest of the gap when the detector calls the end soon after the voice stopped", async () => {
    const h = await overTheAnswer([[4000, 4500]]);
    await h.run(120);
    h.startSpeaking(0);
    await h.run(500); // reported 120 ms after the voice stopped
    const reportedAt = h.clock.now();
    await h.stopSpeaking(0, 4560);
    await h.run(600);
    const back = nextStart(h, reportedAt - 1);
    expect(back).toBeDefined();
    // As in a quiet room: the gap after the end's report.
    expect(back!).toBeGreaterThanOrEqual(reportedAt + GAP_MS);
    expect(back!).toBeLessThan(reportedAt + GAP_MS + 40);
  });

  it("falls silent again as soon as a caller who goes on just after it resumed is heard, and takes both parts for one interruption", async () => {
    const h = await overTheAnswer([
      [4000, 4400],
      [5100, 6300],
    ]);
    h.asrAnswers = ["wait that is wrong"];
    await h.run(120);
    h.startSpeaking(0);
    await h.run(800);
    // Reported at 4,920, the voice silent 520 ms (a quiet room's end and the gap): the agent goes on.
    await h.stopSpeaking(0, 4560);
    await h.run(60);
    expect(nextStart(h, 4919)).toBeDefined();
    await h.run(5220 - h.clock.now());
    // The rest, called speech 120 ms in: the talk that paused the agent goes on, and pauses it at
    // once, not bargeInMinMs into it.
    const clears = h.transport.clearTimes.length;
    h.startSpeaking(0);
    await h.run(20);
    expect(h.transport.clearTimes.length).toBe(clears + 1);
    await h.run(1160);
    await h.stopSpeaking(0, 6360);
    await h.untilAgentSilent(8000);
    expect(
      h
        .events()
        .filter((e) => e.type === "barge-in")
        .map((e) => e.type === "barge-in" && e.outcome),
    ).toEqual(["resumed", "interrupted"]);
    expect(h.historyOf("user").at(-1)).toBe("wait that is wrong");
  });
});
