// What a turn-taking case says about answering, for the service-time figures (service-time.ts):
// the bridge's replies to caller speech (its per-turn metrics, from the call record) and whether the
// case's question was answered at all. The questions are the complete utterances said over
// silence, with nothing after them on the caller's timeline: one is unanswered when the caller
// heard no agent audio after finishing it, to the call's end (the caller hangs up 5 s after a
// silence nobody broke). Paused sentences end their calls 3.5 s after the caller (a safety limit
// shorter than a slow answer), and over-the-agent cases are barge-in scenery: neither is counted.
// Beside them, what the bridge did to answer (hedged E1 requests, per reply in the record's
// metrics, over the caller turns it recorded).
import type { CallEvent } from "../../src/records/call-record.ts";
import type { ChatRequests, ServiceTimeFacts, TurnTimes } from "./service-time.ts";
import { firstAudible } from "./turns-audio.ts";
import type { TurnCase } from "./turns-cases.ts";

export interface CaseAnswers {
  /** The bridge's metrics of each reply to caller speech the caller heard something of. */
  replies: TurnTimes[];
  /** 1 when the case is a question (a complete utterance), else 0. */
  questions: number;
  /** 1 when that question got no agent audio after it. */
  unanswered: number;
  /** Caller turns the bridge recorded (speech). */
  userTurns: number;
  /** Hedged E1 requests its replies sent (their metrics' hedgedRequests; absent counts 0). */
  hedgedRequests: number;
}

/** A reply's hedged requests: a figure the record may not carry (older bridges), read as 0. */
function hedgedOf(metrics: object): number {
  const v = (metrics as { hedgedRequests?: unknown }).hedgedRequests;
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

export function caseAnswers(
  c: TurnCase,
  agentAudio: Int16Array,
  rate: number,
  events: readonly CallEvent[] | undefined,
): CaseAnswers {
  const replies = (events ?? []).flatMap((e) =>
    e.type === "assistant" && e.metrics.voiceToVoiceMs !== undefined && e.heard.trim() !== ""
      ? [e.metrics]
      : [],
  );
  const question = c.category === "complete";
  const endMs = (agentAudio.length * 1000) / rate;
  const heard = question && firstAudible(agentAudio, rate, c.endMs, endMs) !== null;
  const list = events ?? [];
  return {
    replies,
    questions: question ? 1 : 0,
    unanswered: question && !heard ? 1 : 0,
    userTurns: list.filter((e) => e.type === "user" && e.source === "speech").length,
    hedgedRequests: list.reduce((n, e) => n + (e.type === "assistant" ? hedgedOf(e.metrics) : 0), 0),
  };
}

/** One set's facts: its cases' answers and the chat requests the service received meanwhile. */
export function setFacts(
  outcomes: ReadonlyArray<{ answers?: CaseAnswers | undefined }>,
  chatRequests: ChatRequests | null,
): ServiceTimeFacts {
  const answers = outcomes.flatMap((o) => (o.answers ? [o.answers] : []));
  const turns = answers.flatMap((a) => a.replies);
  return {
    turns,
    chatRequests,
    answeredTurns: turns.length,
    unansweredTurns: answers.reduce((n, a) => n + a.unanswered, 0),
    questions: answers.reduce((n, a) => n + a.questions, 0),
  };
}

/** hedged E1 requests ÷ caller turns over a set's cases (null: no caller turn). */
export function hedgedPerTurn(outcomes: ReadonlyArray<{ answers?: CaseAnswers | undefined }>): number | null {
  const answers = outcomes.flatMap((o) => (o.answers ? [o.answers] : []));
  const turns = answers.reduce((n, a) => n + a.userTurns, 0);
  const hedged = answers.reduce((n, a) => n + a.hedgedRequests, 0);
  return turns > 0 ? Math.round((hedged / turns) * 100) / 100 : null;
}
