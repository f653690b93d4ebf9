// The `tracing` section: OpenTelemetry traces of the calls, exported over OTLP/HTTP. Its keys are
// the standard OTEL_* variables (what every SDK and collector guide names), so an operator sets
// them as for any other program; with no endpoint there is no tracing at all (docs/observability.md).
import { z } from "zod";
import { flag, url } from "./values.ts";

/**
 * `name=value` pairs separated by commas, values percent-encoded (the OTLP exporter's headers and
 * OTEL_RESOURCE_ATTRIBUTES), from the environment; a mapping from a config file.
 */
const pairs = (what: string, example: string) =>
  z.union([z.string(), z.record(z.string(), z.string())]).transform((v, ctx) => {
    if (typeof v !== "string") return v;
    const out: Record<string, string> = {};
    for (const item of v
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const at = item.indexOf("=");
      const name = item.slice(0, at).trim();
      let value: string | undefined;
      try {
        value = decodeURIComponent(item.slice(at + 1).trim());
      } catch {
        value = undefined;
      }
      if (at <= 0 || !name || value === undefined) {
        ctx.addIssue({
          code: "custom",
          message: `expected ${what} as name=value pairs separated by commas (${example}); got "${item}"`,
        });
        return z.NEVER;
      }
      out[name] = value;
    }
    return out;
  });

const headers = pairs("headers", "api-key=abc123,x-team=voice");

/** The exporter sends OTLP/HTTP in its JSON encoding, which every OTLP/HTTP receiver takes. */
const protocol = z.enum(["http/json", "http/protobuf"], {
  error: "expected http/json or http/protobuf: traces go over OTLP/HTTP (a collector's port 4318), not gRPC",
});

export const tracingSchema = z
  .object({
    endpoint: url.optional().meta({
      env: "OTEL_EXPORTER_OTLP_ENDPOINT",
      description:
        "OTLP/HTTP base URL of the collector (e.g. http://otel-collector:4318); traces go to its /v1/traces. Unset (and no tracesEndpoint): no tracing, and no OpenTelemetry code is loaded.",
    }),
    tracesEndpoint: url.optional().meta({
      env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      description: "The URL traces are posted to, used as given (before `endpoint`).",
    }),
    headers: headers.optional().meta({
      env: "OTEL_EXPORTER_OTLP_HEADERS",
      secret: true,
      description: "Headers sent with every export (an API key of a tracing service), name=value,…",
    }),
    tracesHeaders: headers.optional().meta({
      env: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
      secret: true,
      description: "Headers sent with trace exports, beside (and over) `headers`.",
    }),
    protocol: protocol.optional().meta({
      env: "OTEL_EXPORTER_OTLP_PROTOCOL",
      description:
        "OTLP transport: http/json or http/protobuf (either is accepted; the bridge sends JSON, which OTLP/HTTP receivers take); grpc is refused.",
    }),
    tracesProtocol: protocol.optional().meta({
      env: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
      description: "The same for traces alone.",
    }),
    serviceName: z.string().min(1).default("voice-bridge").meta({
      env: "OTEL_SERVICE_NAME",
      description: "The traces' service.name.",
    }),
    resourceAttributes: pairs("attributes", "deployment.environment=prod,service.namespace=phone")
      .optional()
      .meta({
        env: "OTEL_RESOURCE_ATTRIBUTES",
        description: "More attributes of the bridge's resource, name=value,…",
      }),
    exporter: z.enum(["otlp", "none"], { error: "expected otlp or none" }).default("otlp").meta({
      env: "OTEL_TRACES_EXPORTER",
      description: "`none` turns tracing off whatever the endpoint.",
    }),
    disabled: flag.default(false).meta({
      env: "OTEL_SDK_DISABLED",
      description: "True turns tracing off whatever the endpoint.",
    }),
  })
  .prefault({})
  .meta({
    description:
      "OpenTelemetry traces of the calls over OTLP/HTTP, set by the standard OTEL_* variables (docs/observability.md).",
  });

export type TracingConfig = z.infer<typeof tracingSchema>;

/** Where traces are posted, or undefined when tracing is off (no endpoint, disabled, exporter none). */
export function tracesUrl(cfg: TracingConfig): string | undefined {
  if (cfg.disabled || cfg.exporter === "none") return undefined;
  if (cfg.tracesEndpoint) return cfg.tracesEndpoint;
  if (!cfg.endpoint) return undefined;
  return `${cfg.endpoint.replace(/\/+$/, "")}/v1/traces`;
}
