// Words said before the agent's greeting is heard (opening.ts): short ones are answered by the
// greeting, which plays whole after them in the history; a request said whole before it, and
// anything said once it was heard, is answered. Real CallSession on virtual time; the recognizer's
// words are scripted, so nothing depends on what a real recognizer heard.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { Harness } from "./harness.ts";

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
});
