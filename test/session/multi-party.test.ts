// The real CallSession with several people on one transport (a voice channel), on virtual time
// with scripted services: each member is listened to on their own, turns carry who said them,
// the reply goes to whoever finished last, and one member's backchannel does not stop the agent.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import type { SessionConfig } from "../../src/session/config.ts";
import { HARNESS_TURN, Harness } from "./harness.ts";

const ALICE = 0;
const BOB = 1;
const LONG_REPLY =
  "We have three plans. The basic plan costs ten dollars. The premium plan costs twenty dollars.";

async function channel(config: Partial<SessionConfig> = {}): Promise<Harness> {
  const h = new Harness(
    new VirtualClock(),
    { multiParty: { respondTo: "all", agentName: "Ava" }, ...config },
    [
      { id: "111", name: "Alice" },
      { id: "222", name: "Bob" },
    ],
  );
  h.start();
  await h.untilAgentSilent();
  return h;
}

/** Runs until the agent has started speaking `n` stretches in all. */
async function untilStretches(h: Harness, n: number): Promise<void> {
  for (let t = 0; t < 5000 && h.transport.speechStarts.length < n; t += 20) await h.run(20);
}

describe("CallSession with several speakers", () => {
  it("answers members in turn and tells the model who said what", async () => {
    const h = await channel();
    h.asrAnswers = ["what time do you open", "and on sundays"];
    h.chatReplies = [[{ text: "At nine." }], [{ text: "Closed on Sundays." }]];
    await h.sayAs(ALICE, 1000);
    await h.untilAgentSilent();
    await h.sayAs(BOB, 800);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["Alice: what time do you open", "Bob: and on sundays"]);
    expect(h.historyOf("assistant").slice(1)).toEqual(["At nine.", "Closed on Sundays."]);
    // The model saw the labelled turns in its request.
    const last = h.chatRequests.at(-1)!;
    expect(last.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "Alice: what time do you open",
      "Bob: and on sundays",
    ]);
    const users = h.events().filter((e) => e.type === "user");
    expect(users.map((e) => e.type === "user" && e.speaker)).toEqual(["Alice", "Bob"]);
  });

  it("answers whoever finished last when another member speaks before the reply", async () => {
    const h = await channel();
    h.asrAnswers = ["i think we should ask", "what do you sell"];
    // Alice's reply is prepared as soon as her words are in, and dropped unheard when Bob speaks.
    h.chatReplies = [[{ text: "Ask away." }], [{ text: "Bikes." }]];
    await h.sayAs(ALICE, 900);
    await h.run(100); // Bob starts 200 ms after Alice stopped, before her turn is confirmed
    await h.sayAs(BOB, 900);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["Alice: i think we should ask", "Bob: what do you sell"]);
    expect(h.historyOf("assistant").slice(1)).toEqual(["Bikes."]);
    // One reply in all (the greeting aside), asked with both turns in the conversation.
    const replies = h.events().filter((e) => e.type === "assistant");
    expect(replies).toHaveLength(2);
    const asked = h.chatRequests.at(-1)!.filter((m) => m.role === "user");
    expect(asked.map((m) => m.content)).toEqual(["Alice: i think we should ask", "Bob: what do you sell"]);
  });

  it("goes on when another member backchannels, and yields when one really interrupts", async () => {
    const h = await channel();
    h.asrAnswers = ["tell me about your plans", "wait a second"];
    h.chatReplies = [[{ text: LONG_REPLY }], [{ text: "Sure." }]];
    await h.sayAs(ALICE, 1000);
    await untilStretches(h, 2);
    await h.run(600);
    await h.sayAs(BOB, 300); // "mm-hm"
    await h.run(300);
    expect(h.events().some((e) => e.type === "barge-in" && e.outcome === "resumed")).toBe(true);
    expect(h.transport.agentSpeaking).toBe(true);
    const clears = h.transport.clears;
    // A real interruption, begun within REJOIN_MS of the "mm-hm": the same talk, it pauses the agent at once.
    await h.sayAs(BOB, 1200);
    expect(h.transport.clears).toBeGreaterThan(clears);
    await h.untilAgentSilent();
    const interrupted = h.events().find((e) => e.type === "assistant" && e.interrupted);
    expect(interrupted?.type === "assistant" && interrupted.heard).toMatch(/^We have three\b/);
    expect(interrupted?.type === "assistant" && interrupted.heard).not.toContain("premium");
    expect(h.historyOf("user")).toEqual(["Alice: tell me about your plans", "Bob: wait a second"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Sure.");
  });

  it("keeps the agent paused while one member talks over it, even when another's backchannel ends", async () => {
    const h = await channel();
    h.asrAnswers = ["tell me about your plans", "hold on I have a question"];
    h.chatReplies = [[{ text: LONG_REPLY }], [{ text: "Go ahead." }]];
    await h.sayAs(ALICE, 1000);
    await untilStretches(h, 2);
    await h.run(1200); // past the window in which Alice going on would mean her turn was not over
    const aliceStart = h.startSpeaking(ALICE); // Alice talks over the agent...
    await h.run(200);
    await h.sayAs(BOB, 250); // ...while Bob says "mm-hm"
    expect(h.transport.agentSpeaking).toBe(false); // Alice still holds the agent
    await h.run(800);
    await h.stopSpeaking(ALICE, aliceStart + 1500);
    await h.untilAgentSilent();
    expect(h.events().some((e) => e.type === "assistant" && e.interrupted)).toBe(true);
    expect(h.historyOf("user").at(-1)).toBe("Alice: hold on I have a question");
    expect(h.historyOf("assistant").at(-1)).toBe("Go ahead.");
  });

  it("in mention mode answers only turns that call the agent by name, and hears the rest", async () => {
    const h = await channel({ multiParty: { respondTo: "mention", agentName: "Ava" } });
    h.asrAnswers = ["did you see the match yesterday", "ava what time is it"];
    h.chatReplies = [[{ text: "It is noon." }]];
    await h.sayAs(ALICE, 1000);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant")).toHaveLength(1); // the greeting only
    await h.sayAs(BOB, 1000);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual([
      "Alice: did you see the match yesterday",
      "Bob: ava what time is it",
    ]);
    expect(h.historyOf("assistant").at(-1)).toBe("It is noon.");
    // The unaddressed turn never reached the model on its own: one request, with both turns.
    expect(h.chatRequests).toHaveLength(1);
    expect(h.chatRequests[0]!.filter((m) => m.role === "user")).toHaveLength(2);
  });

  it("keeps a member's turn once they leave in the sound that paused its answer, which goes on", async () => {
    const h = await channel();
    h.asrAnswers = ["tell me about your plans"];
    h.chatReplies = [[{ text: LONG_REPLY }]];
    await h.sayAs(ALICE, 1000);
    await untilStretches(h, 2);
    await h.run(40);
    h.startSpeaking(ALICE); // just after the answer began: it falls silent at once...
    await h.run(60);
    expect(h.transport.agentSpeaking).toBe(false);
    h.transport.listener.speakerLeft?.("111"); // ...and she leaves within it: the answer goes on
    await h.run(HARNESS_TURN.resumeGraceMs + 100);
    expect(h.transport.agentSpeaking).toBe(true);
    // Her turn is part of the conversation once the grace is over, not only when the answer ends.
    expect(h.events().filter((e) => e.type === "user")).toHaveLength(1);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["Alice: tell me about your plans"]);
    expect(h.historyOf("assistant").at(-1)).toBe(LONG_REPLY);
  });

  it("drops a member's half-said words when they leave, and never re-prompts the channel", async () => {
    const h = await channel({ repromptAfterMs: 2000 });
    h.asrAnswers = ["so what i wanted"];
    await h.sayAs(ALICE, 800);
    h.transport.listener.speakerLeft?.("111");
    await h.run(12_000);
    expect(h.historyOf("user")).toEqual([]);
    expect(h.historyOf("assistant")).toEqual(["Hello."]);
    expect(h.ended).toBeUndefined();
  });
});
