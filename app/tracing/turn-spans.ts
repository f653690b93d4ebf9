// One agent turn's spans: the turn, from the end of the caller's words it answers (or its own start)
// to the end of its reply, and beneath it the stages the turn's figures measure (end of turn,
// recognition, first token, first audio: the same timings as its record's metrics) and a span per
// tool call. The turn span is open while the turn runs, so its chat requests carry its traceparent
// and its tool calls nest in it; the stages are known once it ends and are written then, with their
// own start and end times. A stage the turn never reached ends with the turn, `voice.completed` false.
import {
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { TurnMetrics } from "../../src/records/call-record.ts";
import type { ToolCallTrace, TurnReport, TurnStart, TurnTrace } from "../../src/session/call-trace.ts";
import type { ChatModel, ToolCallRequest } from "../../src/session/services.ts";
import type { ToolKind, ToolOutcome } from "../../src/session/tools.ts";
import { ATTR, metricAttribute, SPAN } from "./attributes.ts";

/** What a turn needs of its call's trace. */
export interface TurnHost {
  readonly tracer: Tracer;
  /** The call span's context. */
  readonly parent: Context;
  /** When the call ended (session clock), once it has. */
  readonly endedAt: number | undefined;
  /** Session clock → wall-clock milliseconds. */
  epoch(t: number): number;
  /** Requests made with `signal` are the turn's. */
  madeBy(signal: AbortSignal, turn: SpanContext): void;
  turnEnded(turn: TurnSpans): void;
}

interface OpenTool {
  span: Span;
  done: boolean;
}

/** A tool's result text starts so when it failed (tools.ts turns every failure into such a text). */
const FAILED_RESULT = /^error:/;

export class TurnSpans implements TurnTrace {
  readonly #host: TurnHost;
  readonly #span: Span;
  readonly #context: Context;
  readonly #start: TurnStart;
  readonly #tools = new Set<OpenTool>();
  #ended = false;

  constructor(host: TurnHost, start: TurnStart, index: number) {
    this.#host = host;
    this.#start = start;
    const attributes: Attributes = {
      [ATTR.turnIndex]: index,
      [ATTR.turnKind]: start.kind,
      [ATTR.turnHeld]: start.held,
    };
    if (start.source) attributes[ATTR.turnSource] = start.source;
    this.#span = host.tracer.startSpan(
      SPAN.turn,
      { startTime: host.epoch(start.since), attributes },
      host.parent,
    );
    this.#context = trace.setSpan(host.parent, this.#span);
  }

  chat(model: ChatModel): ChatModel {
    const turn = this.#span.spanContext();
    return {
      stream: (messages, tools, signal) => {
        this.#host.madeBy(signal, turn);
        return model.stream(messages, tools, signal);
      },
    };
  }

  toolCall(call: ToolCallRequest, kind: ToolKind | undefined, at: number): ToolCallTrace {
    const attributes: Attributes = {
      [ATTR.genAiOperation]: "execute_tool",
      [ATTR.genAiToolName]: call.name,
      [ATTR.genAiToolCallId]: call.id,
    };
    if (kind) attributes[ATTR.toolKind] = kind;
    const open: OpenTool = {
      span: this.#host.tracer.startSpan(
        SPAN.tool(call.name),
        { startTime: this.#host.epoch(this.#clamp(at)), attributes },
        this.#context,
      ),
      done: false,
    };
    if (this.#ended) this.#endTool(open, at, "abandoned");
    else this.#tools.add(open);
    return {
      ended: (end: number, outcome: ToolOutcome | undefined, error?: string) => {
        if (open.done) return;
        const failed =
          error ??
          (outcome?.kind === "result" && FAILED_RESULT.test(outcome.content) ? outcome.content : undefined);
        if (failed) open.span.setStatus({ code: SpanStatusCode.ERROR, message: failed.slice(0, 300) });
        this.#endTool(open, end, outcome?.kind ?? "error");
      },
    };
  }

  ended(r: TurnReport): void {
    if (this.#ended) return;
    const end = this.#clamp(r.at);
    const callEnded = this.#host.endedAt !== undefined && r.at >= this.#host.endedAt;
    const outcome = r.error
      ? "failed"
      : callEnded && (r.interrupted || r.cancelled)
        ? "call_ended"
        : r.cancelled
          ? "cancelled"
          : r.interrupted
            ? "interrupted"
            : "heard";
    this.#stages(r, end);
    const figures: Attributes = {};
    for (const [key, v] of Object.entries(r.metrics))
      if (typeof v === "number") figures[metricAttribute(key as keyof TurnMetrics)] = v;
    this.#span.setAttributes({ ...figures, [ATTR.turnOutcome]: outcome });
    if (r.error) this.#span.setStatus({ code: SpanStatusCode.ERROR, message: r.error.slice(0, 300) });
    this.#close(end);
  }

  /** The call ended and the session never said how this turn did: it ends with the call. */
  abandon(at: number): void {
    if (this.#ended) return;
    this.#span.setAttribute(ATTR.turnOutcome, "call_ended");
    this.#close(this.#clamp(at));
  }

  #close(end: number): void {
    this.#ended = true;
    for (const open of this.#tools) this.#endTool(open, end, "abandoned");
    this.#span.end(this.#host.epoch(end));
    this.#host.turnEnded(this);
  }

  #endTool(open: OpenTool, at: number, outcome: string): void {
    open.done = true;
    this.#tools.delete(open);
    open.span.setAttribute(ATTR.toolOutcome, outcome);
    open.span.end(this.#host.epoch(this.#clamp(at)));
  }

  /** The stages of the turn, each within it. */
  #stages(r: TurnReport, end: number): void {
    const { caller, timings: t } = r;
    if (caller && this.#start.source === "speech") {
      const confirmed = caller.confirmedAt;
      this.#stage(SPAN.endOfTurn, caller.speechEndAt, confirmed, end);
      if (caller.recognizedAt !== undefined && caller.asrMs !== undefined)
        this.#stage(SPAN.recognition, caller.recognizedAt - caller.asrMs, caller.recognizedAt, end);
    }
    // Set words come from no model: their "first token" would measure nothing.
    if (this.#start.kind === "reply" && t.chatStartAt !== undefined)
      this.#stage(SPAN.firstToken, t.chatStartAt, t.firstTokenAt, end);
    if (t.firstTextSentAt !== undefined) this.#stage(SPAN.firstAudio, t.firstTextSentAt, t.firstAudioAt, end);
  }

  #stage(name: string, from: number, to: number | undefined, end: number): void {
    const host = this.#host;
    const start = this.#clamp(from);
    const span = host.tracer.startSpan(
      name,
      { startTime: host.epoch(start), attributes: { [ATTR.completed]: to !== undefined } },
      this.#context,
    );
    span.end(host.epoch(Math.max(start, Math.min(to ?? end, end))));
  }

  /** A time within the turn: not before its start, not after the call's end. */
  #clamp(t: number): number {
    const callEnd = this.#host.endedAt;
    const upTo = callEnd === undefined ? t : Math.min(t, callEnd);
    return Math.max(this.#start.since, upTo);
  }
}
