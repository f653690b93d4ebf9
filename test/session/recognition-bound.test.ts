// A stalled recognizer (a starved or paused service) on virtual time: a call keeps at most its
// live utterance and one recognition waiting on the service, a transcript is waited for at most
// RECOGNITION_DEADLINE_MS before the caller hears an apology, and the call goes on once the
// service is back.
import { describe, expect, it } from "vitest";
import { RECOGNITION_DEADLINE_MS } from "../../src/session/recognition.ts";
import { startedHarness } from "./harness.ts";

const started = startedHarness;

describe("recognition toward a stalled service", () => {
  it("gives a transcript up after its deadline, apologizes, and answers again once the service is back", async () => {
    const h = await started();
    h.asrDelayMs = 10 * 60_000; // the service answers nothing
    h.asrAnswers = ["never heard"];
    const before = h.transport.played.length;
    await h.say(800);
    await h.run(RECOGNITION_DEADLINE_MS - 1_000);
    expect(h.asrPending).toBe(1);
    expect(h.historyOf("assistant").at(-1)).not.toMatch(/^Sorry/);
    await h.run(1_500);
    await h.untilAgentSilent();
    expect(h.asrPending).toBe(0);
    expect(h.transport.played.length).toBeGreaterThan(before);
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    expect(h.ended).toBeUndefined();

    h.asrDelayMs = 80;
    h.asrAnswers = ["are you there"];
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("user").at(-1)).toBe("are you there");
  });

  it("keeps at most the live utterance and one recognition waiting, however often the caller speaks", async () => {
    const h = await started();
    h.asrDelayMs = 10 * 60_000;
    let most = 0;
    for (let i = 0; i < 12; i++) {
      const start = h.startSpeaking(0);
      for (let t = 0; t < 1_000; t += 100) {
        await h.run(100);
        most = Math.max(most, h.asrPending);
      }
      await h.stopSpeaking(0, start + 900);
      for (let t = 0; t < 1_500; t += 100) {
        await h.run(100);
        most = Math.max(most, h.asrPending);
      }
    }
    expect(h.asrStreams).toBeGreaterThanOrEqual(12);
    expect(most).toBeLessThanOrEqual(2);
    // Every dropped one was stopped, not left to finish on its own.
    expect(h.asrAborts).toBeGreaterThanOrEqual(10);
  });
});
