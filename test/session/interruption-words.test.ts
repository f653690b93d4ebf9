// An interruption held for its words, on the real CallSession in virtual time: talk over the
// agent long enough to interrupt it leaves it silent until the words are recognized, and they
// decide. The recognizer is scripted (the harness's): these tests need words, and the embedded
// one does not reliably hear a short "okay okay".
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import { HOLD_MAX_MS } from "../../src/session/interruptions.ts";
import { type Harness, startedHarness } from "./harness.ts";

const REPLY = "Here is a long answer with many words in it that goes on and on for a while.";

/** The caller asks, and while the reply plays talks over it for `ms` (long enough to interrupt). */
async function overTheReply(words: string | Error[], ms = 1200, asrDelayMs?: number): Promise<Harness> {
  // A recognizer given long enough to answer slowly (the embedded service's deadline is 15 s).
  const h = await startedHarness({ deadlines: { ...DEFAULT_SERVICE_DEADLINES, asrMs: 15_000 } });
  h.asrAnswers = ["tell me everything", ...(Array.isArray(words) ? words : [words])];
  h.chatReplies = [[{ text: REPLY }], [{ text: "Sorry, go ahead." }]];
  await h.say(800);
  await h.untilAgentStarts();
  await h.run(1500); // well into the reply
  if (asrDelayMs !== undefined) h.asrDelaysMs = [asrDelayMs];
  await h.say(ms);
  await h.untilAgentSilent();
  return h;
}

function outcomes(h: Harness): string[] {
  return h.events().flatMap((e) => (e.type === "barge-in" ? [e.outcome] : []));
}

describe("an interruption held for its words", () => {
  it("goes on where it fell silent when the words only acknowledge", async () => {
    const h = await overTheReply("okay okay");
    expect(outcomes(h)).toEqual(["resumed"]);
    // The reply was heard to its end, and the acknowledgement asked for nothing.
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(h.historyOf("user")).toEqual(["tell me everything"]);
    expect(h.chatRequests).toHaveLength(1); // the reply's (the greeting is fixed words)
    const reply = h.events().findLast((e) => e.type === "assistant");
    expect(reply?.type === "assistant" && reply.interrupted).toBe(false);
  });

  it("goes on when no words were heard in it (a noise)", async () => {
    const h = await overTheReply("");
    expect(outcomes(h)).toEqual(["resumed"]);
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(h.chatRequests).toHaveLength(1);
  });

  it("stops for words that ask for something, and asks with what was heard of the reply", async () => {
    const h = await overTheReply("okay but wait that is wrong");
    expect(outcomes(h)).toEqual(["interrupted"]);
    const heard = h.historyOf("assistant")[1]!;
    expect(heard).toMatch(/…$/); // what was heard of it, marked as cut off
    expect(REPLY.startsWith(heard.slice(0, -1))).toBe(true);
    // The reply to the interruption was asked with the part heard before the caller's words.
    const asked = h.chatRequests
      .at(-1)!
      .map((m) => `${m.role}: ${typeof m.content === "string" ? m.content : ""}`);
    expect(asked.slice(-2)).toEqual([`assistant: ${heard}`, "user: okay but wait that is wrong"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Sorry, go ahead.");
  });

  it("stops when the words could not be recognized", async () => {
    // The recognition is tried three times.
    const h = await overTheReply([new Error("asr 503"), new Error("asr 503"), new Error("asr 503")]);
    expect(outcomes(h)).toEqual(["interrupted"]);
    expect(h.historyOf("assistant")[1]).not.toBe(REPLY);
    // Each try listened for acknowledgements, as the upload did.
    expect(h.asrHints.slice(1).map((x) => x?.overAgent)).toEqual([true, true, true]);
  });

  it("asks the recognizer to listen for acknowledgements in speech over the agent, and only there", async () => {
    const h = await overTheReply("okay okay");
    // The question before it, and the talk over the reply.
    expect(h.asrHints.map((x) => x?.overAgent)).toEqual([undefined, true]);
    // The caller's next question, after the reply, is theirs alone again.
    h.asrAnswers = ["and on sundays"];
    await h.untilAgentSilent();
    await h.say(800);
    await h.untilAgentStarts();
    expect(h.asrHints.at(-1)).toBeUndefined();
  });

  it("stops when the words take longer than the hold's bound", async () => {
    const h = await overTheReply("okay", 1200, HOLD_MAX_MS + 1000);
    expect(outcomes(h)).toEqual(["interrupted"]);
    expect(h.historyOf("assistant")[1]).not.toBe(REPLY);
  });
});
