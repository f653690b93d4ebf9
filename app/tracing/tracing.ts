// OpenTelemetry traces of the calls, when the standard OTEL_* variables ask for them: a trace per
// call (call → turns → their stages and tool calls), exported over OTLP/HTTP, its id on the call's
// log lines and in the traceparent of the call's requests to the service. This module is the
// gate: it names what a call's tracer gives and loads the OpenTelemetry SDK (otel-tracing.ts) only
// when an endpoint is set, so a bridge without one loads none of it and pays nothing.
import { type TracingConfig, tracesUrl } from "../../src/config/tracing.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallDirection } from "../../src/records/call-record.ts";
import type { CallEnd } from "../../src/records/outcome.ts";
import type { CallTrace } from "../../src/session/call-trace.ts";

/** The headers a call's request to the service carries (W3C traceparent), by the request's signal. */
export type RequestHeaders = (signal?: AbortSignal) => Record<string, string>;

/** What a traced call is. */
export interface TracedCall {
  callId: string;
  agent: string;
  transport: string;
  direction: CallDirection;
}

/** One call's trace: its root span runs from `Tracing.call` to `ended`. */
export interface CallTracer {
  /** What the session reports its turns to. */
  readonly trace: CallTrace;
  /** Fields for the call's log lines, so a log line leads to its trace. */
  readonly logFields: { trace_id: string; span_id: string };
  /** The traceparent of a request: of the turn that made it (its chat requests), else of the call. */
  readonly requestHeaders: RequestHeaders;
  ended(end: CallEnd): void;
}

export interface Tracing {
  /** Where the traces go (for the start-up line). */
  readonly url: string;
  call(call: TracedCall): CallTracer;
  /** Exports the spans not sent yet and stops (the bridge's shutdown). */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  clock: Clock;
  log: Logger;
  /** This bridge's name (service.instance.id). */
  instance: string;
}

/** The calls' tracing, or undefined (nothing loaded) when no endpoint is set or tracing is turned off. */
export async function startTracing(cfg: TracingConfig, opts: TracingOptions): Promise<Tracing | undefined> {
  const url = tracesUrl(cfg);
  if (!url) return undefined;
  const { otelTracing } = await import("./otel-tracing.ts");
  const tracing = otelTracing(cfg, url, opts);
  opts.log.info({ url, serviceName: cfg.serviceName }, "tracing: OpenTelemetry traces over OTLP/HTTP");
  return tracing;
}
