// A long call on virtual time: what a call holds does not grow with its turns. The history sent
// to the model stays within its token budget, and each finished turn's objects (its TTS stream
// and what hangs off it) are released, checked with weak references after a forced collection.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { tokensOf } from "../../src/session/history.ts";
import type { TtsStream } from "../../src/session/services.ts";
import { Harness } from "./harness.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Runs `turns` caller turns (each answered in full) and returns the TTS streams the turns used. */
async function longCall(h: Harness, turns: number): Promise<WeakRef<TtsStream>[]> {
  const streams: WeakRef<TtsStream>[] = [];
  const open = h.openTts.bind(h);
  h.openTts = async () => {
    const s = await open();
    streams.push(new WeakRef(s));
    return s;
  };
  h.start();
  await h.untilAgentSilent();
  for (let i = 0; i < turns; i++) {
    h.asrAnswers = [`this is question number ${i} about my order ${1000 + i} and its delivery`];
    h.chatReplies = [[{ text: `Order ${1000 + i} arrives on Thursday morning before noon. Anything else?` }]];
    await h.say(1500);
    await h.untilAgentSilent();
    await h.run(500);
  }
  return streams;
}

function promptTokens(messages: { content?: unknown }[]): number {
  return messages.reduce((n, m) => n + 3 + (typeof m.content === "string" ? tokensOf(m.content) : 0), 0);
}

describe("a long call", () => {
  it("sends the model a prompt that stops growing once the history budget is reached", async () => {
    const h = new Harness(new VirtualClock(), {
      history: { maxTokens: 300, digestTokens: 80, maxMessages: 1000 },
    });
    await longCall(h, 60);
    const sizes = h.chatRequests.map(promptTokens);
    expect(h.chatRequests.length).toBeGreaterThanOrEqual(60);
    const system = tokensOf(DEFAULT_SESSION_CONFIG.systemPrompt) + 3;
    // System prompt + budget + digest (+ its heading) + the new user turn, whatever the turn.
    const bound = system + 300 + 80 + 20 + 30;
    expect(Math.max(...sizes)).toBeLessThanOrEqual(bound);
    // Flat: the last turns cost what turn 20 cost.
    expect(Math.abs(sizes.at(-1)! - sizes[20]!)).toBeLessThan(40);
    const last = h.chatRequests.at(-1)!;
    expect(last.at(-1)?.content).toBe("this is question number 59 about my order 1059 and its delivery");
    expect(
      last.some((m) => m.content === "this is question number 0 about my order 1000 and its delivery"),
    ).toBe(false);
    expect(String(last[1]?.content)).toMatch(/^Earlier in this call/);
  });

  it("releases each finished turn: its TTS stream is collectable once the turn is over", async () => {
    const h = new Harness(new VirtualClock());
    const streams = await longCall(h, 30);
    expect(streams.length).toBeGreaterThanOrEqual(30);
    // Collections can take a couple of rounds to clear objects reachable from resolved promises.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    const alive = streams.filter((r) => r.deref() !== undefined).length;
    // At most the turn last spoken and the one the pool keeps warm for the next.
    expect(alive).toBeLessThanOrEqual(2);
  });
});
