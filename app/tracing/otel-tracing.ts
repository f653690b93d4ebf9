// The OpenTelemetry SDK, set up for the calls' traces: a tracer provider of its own (the global one
// is left to whoever embeds the bridge), spans batched and posted over OTLP/HTTP to the configured
// endpoint with its headers (the exporter reads the rest of the OTEL_EXPORTER_OTLP_* variables,
// timeout, compression and certificates, from the environment itself), and a log line when the
// collector stops taking them and when it takes them again. Loaded only when tracing is on.
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { TracingConfig } from "../../src/config/tracing.ts";
import type { Logger } from "../../src/core/log.ts";
import { CallSpans } from "./call-spans.ts";
import type { Tracing, TracingOptions } from "./tracing.ts";

type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];
/** ExportResultCode.SUCCESS (of @opentelemetry/core, which the bridge does not depend on directly). */
const EXPORT_SUCCESS = 0;

/** An exporter whose failures are logged: once when exports start failing, once when they recover. */
class LoggedExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: Logger;
  #failing = false;

  constructor(inner: SpanExporter, log: Logger) {
    this.#inner = inner;
    this.#log = log;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      const ok = result.code === EXPORT_SUCCESS;
      if (!ok && !this.#failing)
        this.#log.warn(
          { err: result.error?.message, spans: spans.length },
          "tracing: the collector did not take the spans",
        );
      else if (ok && this.#failing) this.#log.info("tracing: the collector takes the spans again");
      this.#failing = !ok;
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }
}

export function otelTracing(cfg: TracingConfig, url: string, opts: TracingOptions): Tracing {
  const log = opts.log.child({ component: "tracing" });
  const exporter = new OTLPTraceExporter({ url, headers: { ...cfg.headers, ...cfg.tracesHeaders } });
  const resource = defaultResource().merge(
    resourceFromAttributes({
      [ATTR_SERVICE_INSTANCE_ID]: opts.instance,
      ...cfg.resourceAttributes,
      [ATTR_SERVICE_NAME]: cfg.serviceName,
    }),
  );
  const provider = new TracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor({ exporter: new LoggedExporter(exporter, log) })],
  });
  const tracer = provider.getTracer("voice-bridge");
  return {
    url,
    call: (call) => new CallSpans(tracer, opts.clock, call),
    async shutdown() {
      await provider.shutdown();
    },
  };
}
