// A stalled recognizer (a starved or paused service) on virtual time: a call keeps at most its
// live utterance and one recognition waiting on the service, a transcript is waited for at most
// the agent's asrMs deadline, then asked for once more with the audio the bridge holds, and after
// that the caller hears one apology; the call goes on once the service is back.
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import { startedHarness } from "./harness.ts";

const started = startedHarness;
const { asrMs } = DEFAULT_SERVICE_DEADLINES;

describe("recognition toward a stalled service", () => {
  it("gives each attempt up after its deadline, apologizes once, and answers again once the service is back", async () => {
    const h = await started();
    h.asrDelayMs = 10 * 60_000; // the service answers nothing
    h.asrAnswers = ["never heard", "never heard"];
    const before = h.transport.played.length;
    const requests = h.asrRequests.length;
    await h.say(800); // speech-end is reported with it: the deadline runs from here
    await h.run(asrMs - 200);
    expect(h.asrPending).toBe(1);
    expect(h.asrRequests.length - requests).toBe(1); // the streamed upload
    await h.run(400);
    // Past the deadline: the upload dropped, the held audio sent again in one request.
    expect(h.asrPending).toBe(1);
    expect(h.asrAborts).toBeGreaterThanOrEqual(1);
    expect(h.asrRequests.length - requests).toBe(2);
    expect(h.historyOf("assistant").at(-1)).not.toMatch(/^Sorry/);
    await h.run(asrMs);
    await h.untilAgentSilent();
    expect(h.asrPending).toBe(0);
    expect(h.transport.played.length).toBeGreaterThan(before);
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    expect(h.events().filter((e) => e.type === "assistant" && /^Sorry/.test(e.generated))).toHaveLength(1);
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

  it("asks nothing more of the service once the call has ended", async () => {
    // The caller hangs up while their last words are being recognized: the upload fails with the
    // call, and nobody will read a transcript sent again (each request costs on a hosted service).
    const h = await started();
    h.asrDelayMs = 10 * 60_000;
    await h.say(800);
    await h.run(200);
    const requests = h.asrRequests.length;
    expect(h.asrPending).toBe(1);
    h.transport.listener.ended("caller hung up");
    await h.run(3 * asrMs);
    expect(h.asrRequests.length).toBe(requests);
    expect(h.asrPending).toBe(0);
  });
});
