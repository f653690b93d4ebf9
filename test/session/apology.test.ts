// A caller turn the agent cannot answer, on virtual time with scripted services: a late or failed
// recognition is asked again at once with the audio the bridge holds (twice, while time is left);
// when that fails too, the caller hears the apology, once for that turn, never over their voice,
// and stopped like any reply when they talk over it. Then the call goes on.
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import { type Harness, startedHarness } from "./harness.ts";

const { asrMs } = DEFAULT_SERVICE_DEADLINES;
/** The upload and both retries answered 503, then `answers` for the recognitions after them. */
const failedThrice = (...answers: string[]) => [
  new Error("asr 503"),
  new Error("asr 503 again"),
  new Error("asr 503 a third time"),
  ...answers,
];
const apologies = (h: Harness) =>
  h.events().filter((e) => e.type === "assistant" && e.generated.startsWith("Sorry"));

describe("a caller turn the agent cannot answer", () => {
  it("asks again with the held audio when the transcript is late, and answers", async () => {
    const h = await startedHarness();
    h.asrDelaysMs = [10 * 60_000, 80]; // the upload's transcript never comes; the retry's does
    h.asrAnswers = ["hello"];
    const requests = h.asrRequests.length;
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["hello"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Okay.");
    // The streamed utterance (with the VAD's 100 ms lag), then the same utterance held by the bridge.
    expect(h.asrRequests.slice(requests)).toEqual([(300 + 800 + 100) * 16, (300 + 800 + 60) * 16]);
    const reply = h.events().findLast((e) => e.type === "assistant");
    expect(reply?.type === "assistant" && reply.metrics.voiceToVoiceMs).toBeGreaterThan(asrMs);
    expect(reply?.type === "assistant" && reply.metrics.voiceToVoiceMs).toBeLessThan(asrMs + 600);
    expect(apologies(h)).toEqual([]);
  });

  it("apologizes once when the retries fail too, then answers the next turn", async () => {
    const h = await startedHarness();
    h.asrAnswers = failedThrice();
    await h.say(800);
    await h.untilAgentSilent();
    expect(apologies(h)).toHaveLength(1);
    expect(apologies(h)[0]).toMatchObject({ error: "speech recognition failed", interrupted: false });
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    await h.run(3000);
    expect(apologies(h)).toHaveLength(1);
    h.asrAnswers = ["are you there"];
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["are you there"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Okay.");
    expect(apologies(h)).toHaveLength(1);
  });

  it("waits for the caller's silence before it apologizes, and says it if what they said was noise", async () => {
    const h = await startedHarness();
    h.asrDelaysMs = [1000, 1000];
    h.asrAnswers = failedThrice("");
    await h.say(800);
    // With no words yet the turn is confirmed after the longest wait (1.2 s after the speech); the
    // first attempt failed at 1.1 s, the retry is on its way.
    await h.run(1400);
    const starts = h.transport.speechStarts.length;
    const start = h.startSpeaking(0); // the caller goes on (a cough, as it turns out)
    await h.run(1000); // the retry fails meanwhile
    expect(h.logLines("apologizing to the caller")).toHaveLength(1);
    expect(h.transport.speechStarts.slice(starts)).toEqual([]);
    const stoppedAt = h.clock.now();
    await h.stopSpeaking(0, start + 900);
    await h.untilAgentSilent();
    expect(apologies(h)).toHaveLength(1);
    expect(h.transport.speechStarts.slice(starts)).toHaveLength(1);
    expect(h.transport.speechStarts.at(-1)).toBeGreaterThan(stoppedAt);
  });

  it("does not apologize in a pause mid-sentence when the words before it could not be recognized", async () => {
    const h = await startedHarness();
    h.asrAnswers = failedThrice("the front light only works now and then");
    const starts = h.transport.speechStarts.length;
    await h.say(700); // "The front light", whose recognition fails at once, three times
    await h.run(500); // a pause as long as a mid-sentence one
    await h.say(1200); // "only works now and then"
    await h.untilAgentSilent();
    expect(apologies(h)).toEqual([]);
    expect(h.historyOf("user")).toEqual(["the front light only works now and then"]);
    expect(h.transport.speechStarts.slice(starts)).toHaveLength(1);
  });

  it("drops the apology due when the caller's next words are answered", async () => {
    const h = await startedHarness();
    h.asrDelaysMs = [1000, 1000];
    h.asrAnswers = failedThrice("i said where are you");
    h.chatReplies = [[{ text: "On Main Street." }]];
    await h.say(800);
    await h.run(1400);
    const starts = h.transport.speechStarts.length;
    await h.say(1000); // over the failure of the last words' recognition
    await h.untilAgentSilent();
    expect(apologies(h)).toEqual([]);
    expect(h.historyOf("user")).toEqual(["i said where are you"]);
    expect(h.historyOf("assistant").at(-1)).toBe("On Main Street.");
    expect(h.transport.speechStarts.slice(starts)).toHaveLength(1);
  });

  it("is stopped by a barge-in like any reply, and the caller's words answered", async () => {
    const h = await startedHarness();
    h.asrAnswers = failedThrice("i want a person");
    await h.say(800);
    await h.untilAgentStarts();
    await h.run(1300); // past the moment when speaking again would still be the same turn
    const clears = h.transport.clears;
    await h.say(1200);
    expect(h.transport.clears).toBe(clears + 1);
    await h.untilAgentSilent();
    const [apology] = apologies(h);
    expect(apology).toMatchObject({ interrupted: true, error: "speech recognition failed" });
    // What was heard of it, as of any reply cut short: its first words.
    expect(apology?.type === "assistant" && apology.heard).toMatch(/^Sorry, I'm [^?]*…$/);
    expect(h.historyOf("user")).toEqual(["i want a person"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Okay.");
  });
});
