// One call's trace: its root span (from the session's start to the call's end: agent, transport,
// direction, then the outcome), a span per agent turn beneath it (turn-spans.ts), and the W3C
// traceparent of the call's requests to the service, so the service's own spans join the trace.
// Every span ends: a turn when it is heard, cut, dropped or fails, and whatever the call's end
// left open (a turn, a tool still running) at that end.
import {
  type Context,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Clock } from "../../src/core/clock.ts";
import type { CallEnd } from "../../src/records/outcome.ts";
import type { CallTrace, TurnStart, TurnTrace } from "../../src/session/call-trace.ts";
import { ATTR, SPAN } from "./attributes.ts";
import type { CallTracer, TracedCall } from "./tracing.ts";
import { type TurnHost, TurnSpans } from "./turn-spans.ts";

/** The W3C trace-context header of a span (https://www.w3.org/TR/trace-context/#traceparent-header). */
export function traceparent(sc: SpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

export class CallSpans implements CallTracer, CallTrace, TurnHost {
  readonly tracer: Tracer;
  readonly parent: Context;
  readonly logFields: { trace_id: string; span_id: string };
  readonly #span: Span;
  readonly #clock: Clock;
  /** Wall-clock milliseconds at the session clock's zero (span times are wall-clock). */
  readonly #origin: number;
  /** Which turn made a request, by the request's abort signal (each turn has its own). */
  readonly #requests = new WeakMap<AbortSignal, SpanContext>();
  readonly #live = new Set<TurnSpans>();
  #turns = 0;
  /** The call's end, on the session clock. */
  endedAt: number | undefined;

  constructor(tracer: Tracer, clock: Clock, call: TracedCall) {
    this.tracer = tracer;
    this.#clock = clock;
    const now = clock.now();
    this.#origin = Date.now() - now;
    this.#span = tracer.startSpan(SPAN.call, {
      root: true,
      startTime: this.epoch(now),
      attributes: {
        [ATTR.callId]: call.callId,
        [ATTR.agent]: call.agent,
        [ATTR.transport]: call.transport,
        [ATTR.direction]: call.direction,
      },
    });
    this.parent = trace.setSpan(ROOT_CONTEXT, this.#span);
    const sc = this.#span.spanContext();
    this.logFields = { trace_id: sc.traceId, span_id: sc.spanId };
  }

  get trace(): CallTrace {
    return this;
  }

  epoch(t: number): number {
    return this.#origin + t;
  }

  readonly requestHeaders = (signal?: AbortSignal): Record<string, string> => {
    const turn = signal && this.#requests.get(signal);
    return { traceparent: traceparent(turn ?? this.#span.spanContext()) };
  };

  madeBy(signal: AbortSignal, turn: SpanContext): void {
    this.#requests.set(signal, turn);
  }

  turnStarted(start: TurnStart): TurnTrace {
    const turn = new TurnSpans(this, start, ++this.#turns);
    this.#live.add(turn);
    if (this.endedAt !== undefined) this.#sweepSoon();
    return turn;
  }

  turnEnded(turn: TurnSpans): void {
    this.#live.delete(turn);
  }

  ended(end: CallEnd): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = this.#clock.now();
    this.#span.setAttributes({
      [ATTR.outcome]: end.outcome,
      [ATTR.endReason]: end.reason,
      [ATTR.turns]: this.#turns,
    });
    this.#span.end(this.epoch(this.endedAt));
    this.#sweepSoon();
  }

  /**
   * The session reports a turn the call's end cut a moment later (its result comes as a promise);
   * a turn still open after that never will report, and ends at the call's end.
   */
  #sweepSoon(): void {
    setImmediate(() => {
      for (const turn of this.#live) turn.abandon(this.endedAt ?? this.#clock.now());
    });
  }
}
