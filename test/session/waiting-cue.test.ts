// The waiting cue on virtual time: a late answer gets the agent's cue first (once, never over the
// caller, never counted as the answer); a prompt answer gets none; a caller who starts speaking
// while the cue plays is not talked over.
import { describe, expect, it } from "vitest";
import { startedHarness } from "./harness.ts";

const CUE = { text: "Mm-hm.", afterMs: 600 };
const cueNotes = (h: Awaited<ReturnType<typeof startedHarness>>) =>
  h.events().filter((e) => e.type === "note" && e.text.startsWith("waiting cue played"));

describe("the waiting cue", () => {
  it("plays once when the answer is late, before the answer, and is not the answer", async () => {
    const h = await startedHarness({ waitingCue: CUE });
    h.asrAnswers = ["what are your opening hours"];
    h.chatReplies = [[{ text: "We are open nine to five." }]];
    h.tokenMs = 1500; // the first token comes 1.5 s after the chat is asked
    const startsBefore = h.transport.speechStarts.length;
    await h.say(1000);
    await h.untilAgentSilent();
    expect(cueNotes(h)).toHaveLength(1);
    // The cue started the agent's sound; the answer followed it.
    expect(h.transport.speechStarts.length).toBeGreaterThan(startsBefore);
    expect(h.historyOf("assistant")).toEqual(["Hello.", "We are open nine to five."]);
    const answer = h.events().find((e) => e.type === "assistant" && e.generated.startsWith("We are"));
    expect(answer?.type === "assistant" && answer.metrics.voiceToVoiceMs).toBeGreaterThan(1500);
  });

  it("does not play when the answer comes in time", async () => {
    const h = await startedHarness({ waitingCue: CUE });
    h.asrAnswers = ["what are your opening hours"];
    h.chatReplies = [[{ text: "We are open nine to five." }]];
    await h.say(1000);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant")).toEqual(["Hello.", "We are open nine to five."]);
    expect(cueNotes(h)).toHaveLength(0);
  });

  it("is off when the agent names none", async () => {
    const h = await startedHarness();
    h.asrAnswers = ["what are your opening hours"];
    h.tokenMs = 1500;
    await h.say(1000);
    await h.untilAgentSilent();
    expect(cueNotes(h)).toHaveLength(0);
  });

  it("stops at once when the caller starts speaking over it", async () => {
    const h = await startedHarness({
      waitingCue: { text: "One moment while I look that up.", afterMs: 400 },
    });
    h.asrAnswers = ["what are your opening hours", "and on sundays"];
    h.tokenMs = 3000;
    const end = h.startSpeaking(0);
    await h.run(1000);
    await h.stopSpeaking(0, end + 900);
    // Wait for the cue to start playing.
    for (let t = 0; t < 3000 && cueNotes(h).length === 0; t += 20) await h.run(20);
    expect(cueNotes(h)).toHaveLength(1);
    expect(h.transport.agentSpeaking).toBe(true);
    const clears = h.transport.clears;
    h.startSpeaking(0);
    await h.run(20);
    expect(h.transport.clears).toBe(clears + 1);
    expect(h.transport.agentSpeaking).toBe(false);
  });
});
