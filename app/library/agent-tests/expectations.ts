// Each expectation of a scenario against what its call showed: passed or not, and when not, what
// was seen instead, so a failure reads as a sentence ("calls lookup_order {...}: seen ...").
import { isDeepStrictEqual } from "node:util";
import type { AgentTurn, ObservedCall } from "./observed.ts";
import type { Expectation } from "./scenario.ts";

export interface ExpectationResult {
  /** The expectation in words, e.g. `calls lookup_order {"order_id":"4217"}`. */
  expectation: string;
  passed: boolean;
  /** What the call showed instead (a failure), or the judge's reason. */
  seen?: string;
}

/** Judges the call against a rubric (a chat model): whether it meets it, and why. */
export type Judge = (rubric: string, call: ObservedCall) => Promise<{ pass: boolean; reason: string }>;

const quote = (s: string) => JSON.stringify(s);
const clip = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const normal = (s: string) => s.replace(/\s+/g, " ").trim();

/** The expectation as a line of the results. */
export function describeExpectation(e: Expectation): string {
  const not = e.not === true;
  if (e.says?.judge !== undefined) return `is judged ${not ? "not " : ""}to meet ${quote(e.says.judge)}`;
  if (e.says) {
    const which = e.turn === undefined ? "" : e.turn === "last" ? " (its last turn)" : ` (turn ${e.turn})`;
    const what = e.says.exact !== undefined ? quote(e.says.exact) : `/${e.says.pattern}/`;
    return `${not ? "does not say" : "says"} ${what}${which}`;
  }
  if (e.tool !== undefined)
    return `${not ? "does not call" : "calls"} ${e.tool}${e.arguments ? ` ${JSON.stringify(e.arguments)}` : ""}`;
  if (e.outcome !== undefined) return e.outcome === "rejected" ? "rejects the call" : `ends ${e.outcome}`;
  if (e.transfer !== undefined)
    return e.transfer === false
      ? "does not transfer"
      : `transfers${typeof e.transfer === "string" ? ` to ${e.transfer}` : ""}`;
  if (e.answeredBy !== undefined) return `is answered by agent ${e.answeredBy}`;
  if (e.answersWithinMs !== undefined) return `answers each line within ${e.answersWithinMs} ms`;
  return `speaks first within ${e.greetsWithinMs} ms`;
}

function selectTurns(turns: readonly AgentTurn[], turn: Expectation["turn"]): AgentTurn[] {
  if (turn === undefined) return [...turns];
  const t = turn === "last" ? turns.at(-1) : turns[turn - 1];
  return t ? [t] : [];
}

const saidLines = (turns: readonly AgentTurn[]) =>
  turns.length ? turns.map((t) => `${t.n}: ${quote(clip(t.text))}`).join(" · ") : "the agent said nothing";

function argumentMatches(expected: unknown, actual: unknown): boolean {
  if (typeof expected === "object" && expected !== null && "pattern" in expected)
    return (
      actual !== undefined &&
      new RegExp(String(expected.pattern), "i").test(
        typeof actual === "string" ? actual : JSON.stringify(actual),
      )
    );
  if (typeof expected !== "object" && (typeof actual !== "object" || actual === null))
    return String(expected) === String(actual);
  return isDeepStrictEqual(expected, actual);
}

function toolMatches(e: Expectation, name: string, args: string): boolean {
  if (name !== e.tool) return false;
  if (!e.arguments) return true;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(args) as Record<string, unknown>;
  } catch {
    return false;
  }
  return Object.entries(e.arguments).every(([k, v]) => argumentMatches(v, parsed[k]));
}

function checkTool(e: Expectation, call: ObservedCall): ExpectationResult {
  const match = call.toolCalls.some((c) => toolMatches(e, c.name, c.arguments));
  const seen = call.toolCalls.length
    ? `tool calls: ${call.toolCalls.map((c) => `${c.name} ${c.arguments}`).join(" · ")}`
    : "no tool calls";
  return { expectation: describeExpectation(e), passed: match !== (e.not === true), seen };
}

async function checkSays(e: Expectation, call: ObservedCall, judge: Judge): Promise<ExpectationResult> {
  const turns = selectTurns(call.turns, e.turn);
  const says = e.says!;
  if (says.judge !== undefined) {
    const { pass, reason } = await judge(says.judge, call);
    return {
      expectation: describeExpectation(e),
      passed: pass !== (e.not === true),
      seen: `the judge: ${reason}`,
    };
  }
  const re = says.pattern !== undefined ? new RegExp(says.pattern, "i") : undefined;
  const hit = turns.some((t) => (re ? re.test(t.text) : normal(t.text) === normal(says.exact!)));
  const seen =
    e.turn !== undefined && turns.length === 0
      ? `the agent had ${call.turns.length} turn(s)`
      : saidLines(turns);
  return { expectation: describeExpectation(e), passed: hit !== (e.not === true), seen };
}

function checkTiming(e: Expectation, call: ObservedCall): ExpectationResult {
  if (e.greetsWithinMs !== undefined) {
    const ms = call.firstAudioMs;
    return {
      expectation: describeExpectation(e),
      passed: ms !== null && ms <= e.greetsWithinMs,
      seen: ms === null ? "the agent never spoke" : `first audio after ${ms} ms`,
    };
  }
  const limit = e.answersWithinMs!;
  const late = call.answers.filter((a) => a.answerMs === null || a.answerMs > limit);
  const seen = call.answers
    .map((a) => `${quote(clip(a.line, 40))} ${a.answerMs === null ? "unanswered" : `${a.answerMs} ms`}`)
    .join(" · ");
  return {
    expectation: describeExpectation(e),
    passed: late.length === 0,
    seen: seen || "the caller said nothing",
  };
}

/** One expectation against the call. */
export async function check(e: Expectation, call: ObservedCall, judge: Judge): Promise<ExpectationResult> {
  if (e.outcome === "rejected")
    return {
      expectation: describeExpectation(e),
      passed: call.rejected,
      seen: call.rejected ? "rejected" : `answered by agent ${call.agent}`,
    };
  if (call.rejected)
    return {
      expectation: describeExpectation(e),
      passed: false,
      seen: "the call was rejected before it was answered",
    };
  if (e.says) return checkSays(e, call, judge);
  if (e.tool !== undefined) return checkTool(e, call);
  if (e.outcome !== undefined)
    return {
      expectation: describeExpectation(e),
      passed: call.outcome === e.outcome,
      seen: call.outcome ? `ended ${call.outcome} (${call.endReason})` : "the call's end was not recorded",
    };
  if (e.transfer !== undefined) {
    const target = e.transfer;
    const plain = (t: string) => t.replace(/[\s().-]/g, "");
    const passed =
      target === false
        ? call.transfers.length === 0
        : target === true
          ? call.transfers.length > 0
          : call.transfers.some((t) => plain(t) === plain(target));
    const seen = call.transfers.length ? `transferred to ${call.transfers.join(", ")}` : "no transfer";
    return { expectation: describeExpectation(e), passed, seen };
  }
  if (e.answeredBy !== undefined)
    return {
      expectation: describeExpectation(e),
      passed: call.agent === e.answeredBy,
      seen: `answered by agent ${call.agent}`,
    };
  return checkTiming(e, call);
}
