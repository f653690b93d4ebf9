// Handoff between agents (#56) on the agents fixture, for the transports' tests: `support` (a
// female voice) may hand the call to `accounts` (a male voice, no greeting and no handoff line, so
// its model speaks first to the conversation it was given: its first words show what it got — the
// scripted handoff rule's after-tool line with the whole history, the scripted greeting with none).
// The scripted model hands over on keypad 2, or when the caller says "accounts" or "department".
import { readFileSync, writeFileSync } from "node:fs";
import { expect } from "vitest";
import { parse, stringify } from "yaml";
import { concatPcm, levelDbfs } from "../../codecs/pcm.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { medianF0 } from "../service/helpers/f0.ts";
import type { AgentsFixture } from "./agents-fixture.ts";

export type CarriedHistory = "whole" | "none";

/** Support's words as it hands the call over. */
export const HANDING = "Over to accounts.";
/** The accounts agent's first words, by what it was given of the conversation. */
export const FIRST_WORDS: Record<CarriedHistory, string> = {
  // The handoff's tool call and result, carried: the scripted model answers them.
  whole: "Accounts here, with your notes from support.",
  // Nothing carried: the scripted model greets a conversation that has not begun.
  none: "Accounts here, with no notes at all.",
};

/** Adds the handoff to the fixture's tree and scripted model (before the bridge starts). */
export function addHandoff(f: AgentsFixture, history: CarriedHistory): void {
  const file = (f.tree.local as { scriptedAgent: string }).scriptedAgent;
  const scripted = parse(readFileSync(file, "utf8")) as { greeting: string; rules: unknown[] };
  scripted.greeting = FIRST_WORDS.none;
  scripted.rules.push({
    intent: "accounts",
    when: ["keypad: 2\\b", "\\b(accounts|department)\\b"],
    reply: HANDING,
    tool: { name: "handoff", arguments: { agent: "accounts", reason: "the caller asked for accounts" } },
    without_tool: "You are with accounts already.",
    after_tool: FIRST_WORDS.whole,
  });
  writeFileSync(file, stringify(scripted));
  const agents = f.tree.agents as Record<string, Record<string, unknown>>;
  agents.support = { ...agents.support, handoffs: ["accounts"], handoffHistory: history };
  agents.accounts = { voice: "en_male_adam" };
  f.write();
}

/** The record's account: support's greeting and handing line, then the accounts agent's first words, the handoff's event. */
export function expectHandedOff(record: CallRecord, greeting: string, history: CarriedHistory): void {
  expect(record.agent).toBe("support");
  const said = record.turns.flatMap((t: TurnView) =>
    t.role === "assistant" ? [{ text: t.text, agent: t.agent, tools: t.tools }] : [],
  );
  expect(said).toEqual([
    { text: greeting, agent: undefined, tools: [] },
    { text: HANDING, agent: undefined, tools: ["handoff"] },
    { text: FIRST_WORDS[history], agent: "accounts", tools: [] },
  ]);
  expect(record.events.filter((e) => e.type === "handoff")).toEqual([
    expect.objectContaining({
      from: "support",
      to: "accounts",
      reason: "the caller asked for accounts",
      history,
    }),
  ]);
}

/** The audible 20 ms frames of `pcm`, joined (the silences between lines left out). */
function voiced(pcm: Int16Array, rate: number): Int16Array {
  const n = (rate / 1000) * 20;
  const frames: Int16Array[] = [];
  for (let at = 0; at + n <= pcm.length; at += n) {
    const frame = pcm.subarray(at, at + n);
    if (levelDbfs(frame) > -45) frames.push(frame);
  }
  return concatPcm(frames);
}

/**
 * What the caller heard, everything since the call began (`rate` Hz): the first 1.2 s of speech
 * (support's greeting) is in a clearly higher voice than the last (the accounts agent's first words).
 */
export function expectVoicesChanged(heard: Int16Array, rate: number): void {
  const speech = voiced(heard, rate);
  const window = 1.2 * rate;
  expect(speech.length).toBeGreaterThan(3 * window);
  const support = medianF0(speech.subarray(0, window), rate);
  const accounts = medianF0(speech.subarray(speech.length - window), rate);
  expect(accounts).toBeGreaterThan(60);
  expect(support).toBeGreaterThan(accounts * 1.3);
}
