import { describe, expect, it } from "vitest";
import { ConversationHistory, heardText, tokensOf } from "../../src/session/history.ts";

const SYSTEM = "You are a friendly phone agent.";

/** A turn of ~20 words that differs per index, as a long call's turns do. */
function userWords(i: number): string {
  return `This is caller turn number ${i}, asking about order ${1000 + i} and whether it ships to street ${i} before Friday.`;
}
function agentWords(i: number): string {
  return `Order ${1000 + i} ships on Thursday to street ${i}; you will get a text message with the tracking number.`;
}

function promptTokens(h: ConversationHistory): number {
  return h.messages().reduce((n, m) => n + 3 + (typeof m.content === "string" ? tokensOf(m.content) : 0), 0);
}

describe("ConversationHistory: bounded by tokens", () => {
  it("keeps the prompt within the budget however long the call goes, oldest turns leaving first", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 400, digestTokens: 120, maxMessages: 1000 });
    const sizes: number[] = [];
    for (let i = 0; i < 500; i++) {
      h.addUser(userWords(i));
      h.addAssistant(agentWords(i));
      sizes.push(promptTokens(h));
    }
    expect(h.size.tokens).toBeLessThanOrEqual(400);
    expect(h.size.digestTokens).toBeLessThanOrEqual(120);
    // Flat: the prompt after 500 turns is no bigger than after 50.
    expect(Math.max(...sizes.slice(50))).toBeLessThanOrEqual(tokensOf(SYSTEM) + 400 + 120 + 3 * 2 + 20);
    expect(sizes[499]! - sizes[49]!).toBeLessThan(40);
    const msgs = h.messages();
    // The newest turn is there verbatim; the first is gone from the verbatim turns.
    expect(msgs.at(-1)).toEqual({ role: "assistant", content: agentWords(499) });
    expect(msgs.at(-2)).toEqual({ role: "user", content: userWords(499) });
    expect(msgs.some((m) => m.content === userWords(0))).toBe(false);
    expect(h.size.dropped).toBeGreaterThan(900);
  });

  it("keeps what fell out in a digest after the system prompt, most recent lines kept", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 200, digestTokens: 100, maxMessages: 1000 });
    for (let i = 0; i < 20; i++) {
      h.addUser(userWords(i));
      h.addAssistant(agentWords(i));
    }
    const [system, digest, ...recent] = h.messages();
    expect(system).toEqual({ role: "system", content: SYSTEM });
    expect(digest?.role).toBe("system");
    const text = digest!.content as string;
    expect(text).toMatch(/^Earlier in this call/);
    // The message just before the verbatim ones is the digest's last line; the first turn is gone.
    const first = recent[0]!;
    const n = Number(/(\d+)/.exec(first.content as string)?.[1]);
    const lastLine = text.split("\n").at(-1);
    if (first.role === "user") expect(lastLine).toBe(`Agent: ${agentWords(n - 1)}`);
    else expect(lastLine).toBe(`Caller: ${userWords(n - 1000)}`);
    expect(text).not.toContain("order 1000 ");
    expect(text).toMatch(/Caller: This is caller turn number \d+/);
    expect(text).toMatch(/Agent: Order \d+ ships/);
    expect(tokensOf(text)).toBeLessThanOrEqual(100 + 20);
  });

  it("with no digest budget, drops old turns outright", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 150, digestTokens: 0, maxMessages: 1000 });
    for (let i = 0; i < 30; i++) h.addUser(userWords(i));
    const msgs = h.messages();
    expect(msgs.filter((m) => m.role === "system")).toHaveLength(1);
    expect(h.size.tokens).toBeLessThanOrEqual(150);
    expect(msgs.at(-1)?.content).toBe(userWords(29));
  });

  it("counts tool calls and results, and never leaves a tool result without its call", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 120, digestTokens: 50, maxMessages: 1000 });
    for (let i = 0; i < 10; i++) {
      h.addUser(userWords(i));
      h.addAssistant("", [
        {
          id: `c${i}`,
          type: "function",
          function: { name: "lookup_order", arguments: `{"order":"${1000 + i}"}` },
        },
      ]);
      h.addToolResult(`c${i}`, `{"status":"shipped","eta":"Thursday","order":"${1000 + i}"}`);
      h.addAssistant(agentWords(i));
      const recent = h.messages().filter((m) => m.role !== "system");
      expect(recent[0]?.role).not.toBe("tool");
      expect(h.size.tokens).toBeLessThanOrEqual(120);
    }
    // Tool traffic is not digested: only spoken words are.
    const digest = h.messages()[1]!.content as string;
    expect(digest).not.toContain("lookup_order");
    expect(digest).not.toContain("shipped");
  });

  it("a message bigger than the whole budget still goes to the model, alone", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 50, digestTokens: 30, maxMessages: 1000 });
    h.addUser("short");
    const long = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ");
    h.addUser(long);
    const recent = h.messages().filter((m) => m.role !== "system");
    expect(recent).toEqual([{ role: "user", content: long }]);
    // The digest line of the dropped "short" is there; a digest line is clipped to the digest budget.
    expect(h.messages()[1]!.content).toContain("Caller: short");
  });

  it("caps the number of messages too", () => {
    const h = new ConversationHistory(SYSTEM, { maxTokens: 100_000, digestTokens: 0, maxMessages: 6 });
    for (let i = 0; i < 10; i++) h.addUser(`turn ${i}`);
    expect(h.messages().map((m) => m.content)).toEqual([
      SYSTEM,
      "turn 4",
      "turn 5",
      "turn 6",
      "turn 7",
      "turn 8",
      "turn 9",
    ]);
  });
});

describe("heardText", () => {
  it("keeps whole sentences heard and the share of the one cut", () => {
    const s = [
      { text: "One two three.", startMs: 0, durationMs: 600 },
      { text: "Four five six seven.", startMs: 600, durationMs: 800 },
    ];
    expect(heardText(s, 1000)).toBe("One two three. Four five…");
  });
});
