// What a call's session tells whoever traces it: each agent turn as it starts and as it ends (with
// the timings its metrics come from), the turn's requests to the chat model and its tool calls. The
// session knows no tracer (the OpenTelemetry adapter is app/tracing/); without one it calls nothing
// here and pays nothing. Times are the session clock's.
import type { Clock } from "../core/clock.ts";
import type { TurnMetrics } from "../records/call-record.ts";
import type { AgentTurn, AgentTurnResult, TurnTimings } from "./agent-turn.ts";
import type { ChatModel, ToolCallRequest } from "./services.ts";
import type { ToolBox, ToolKind, ToolOutcome } from "./tools.ts";
import { type AnsweredTurn, turnMetrics } from "./turn-metrics.ts";

/** One call's tracer, as the session sees it. */
export interface CallTrace {
  /** An agent turn starts now. */
  turnStarted(start: TurnStart): TurnTrace;
}

export interface TurnStart {
  /** `reply`: the model answers; `fixed`: set words (greeting, re-prompt, goodbye). */
  kind: "reply" | "fixed";
  /** Where the turn begins for the caller: the end of the words it answers, else `at`. */
  since: number;
  at: number;
  /** Started before the caller's turn was confirmed: its audio waits until then, or it is dropped. */
  held: boolean;
  /** What the caller's turn was, for a reply to one. */
  source: "speech" | "dtmf" | undefined;
}

/** The caller's side of a turn: when their words ended, were confirmed and were recognized. */
export interface CallerTurn extends AnsweredTurn {
  /** When the transcript arrived (`asrMs` after recognition began). */
  recognizedAt?: number;
}

export interface TurnReport {
  /** When the turn ended: heard to its end, interrupted, dropped or failed. */
  at: number;
  timings: Readonly<TurnTimings>;
  caller: CallerTurn | undefined;
  interrupted: boolean;
  /** Dropped before the caller heard it (the caller went on: the speculation was wasted). */
  cancelled: boolean;
  error: string | undefined;
  metrics: TurnMetrics;
}

export interface TurnTrace {
  /** The turn's chat model: its requests go out as this turn's. */
  chat(model: ChatModel): ChatModel;
  /** A tool call starts at `at`; what it returns hears how it ended. */
  toolCall(call: ToolCallRequest, kind: ToolKind | undefined, at: number): ToolCallTrace;
  ended(report: TurnReport): void;
}

export interface ToolCallTrace {
  /** The tool answered (`outcome`) or threw (`error`). */
  ended(at: number, outcome: ToolOutcome | undefined, error?: string): void;
}

/** What a turn needs of its tools. */
export type TurnTools = Pick<ToolBox, "definitions" | "run">;

/** The call's tools as one turn uses them: each call reported to the turn's trace. */
export function tracedTools(box: ToolBox, trace: TurnTrace, clock: Clock): TurnTools {
  return {
    definitions: () => box.definitions(),
    async run(call, signal, say) {
      const traced = trace.toolCall(call, box.kindOf(call.name), clock.now());
      try {
        const outcome = await box.run(call, signal, say);
        traced.ended(clock.now(), outcome);
        return outcome;
      } catch (err) {
        traced.ended(clock.now(), undefined, (err as Error)?.message ?? String(err));
        throw err;
      }
    },
  };
}

/** Tells the turn's trace how it ended, with the same figures the record files. */
export function reportTurn(
  trace: TurnTrace,
  turn: AgentTurn,
  caller: CallerTurn | undefined,
  r: AgentTurnResult,
  at: number,
  interruptedBy: { startAt: number; clearedAt: number } | undefined,
): void {
  trace.ended({
    at,
    timings: turn.timings,
    caller,
    interrupted: r.interrupted,
    cancelled: r.cancelled,
    error: r.error,
    metrics: turnMetrics(turn, caller, r, interruptedBy),
  });
}

/** The trace of an agent turn starting at `at` (answering `job` when it is a reply), when the call is traced. */
export function traceTurn(
  trace: CallTrace | undefined,
  at: number,
  meta: { kind: "reply" | "fixed" | "apology"; job?: { speechEndAt: number; source: "speech" | "dtmf" } },
  held: boolean,
): TurnTrace | undefined {
  if (!trace) return undefined;
  const { job } = meta;
  const kind = meta.kind === "reply" ? "reply" : "fixed";
  return trace.turnStarted({ kind, since: job?.speechEndAt ?? at, at, held, source: job?.source });
}
