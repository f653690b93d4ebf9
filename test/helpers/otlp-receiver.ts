// An OTLP/HTTP trace receiver for the tests: a real HTTP server taking POST /v1/traces as a
// collector does, decoding each body by the protocol's JSON encoding (ExportTraceServiceRequest of
// opentelemetry-proto, with the OTLP/HTTP JSON mapping's rules: trace and span ids as lowercase hex,
// 64-bit times as decimal strings, enums as integers, attribute values as AnyValue) and refusing a
// body that breaks it, as a collector would, with 400. The bridge's exporter sends that encoding
// (Content-Type application/json); a protobuf body is refused (415) rather than misread.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";

const hex = (bytes: number) =>
  z.string().regex(new RegExp(`^[0-9a-f]{${bytes * 2}}$`), `${bytes} bytes as hex`);
/** fixed64 / int64: a decimal string in the JSON mapping (a number is accepted too). */
const uint64 = z
  .union([z.string().regex(/^\d+$/), z.number().int().nonnegative()])
  .transform((v) => BigInt(v));

type AnyValue =
  | { stringValue: string }
  | { boolValue: boolean }
  | { intValue: string | number }
  | { doubleValue: number }
  | { arrayValue: { values?: AnyValue[] } }
  | { kvlistValue: { values?: { key: string; value: AnyValue }[] } }
  | { bytesValue: string };

const anyValue: z.ZodType<AnyValue> = z.lazy(() =>
  z.union([
    z.strictObject({ stringValue: z.string() }),
    z.strictObject({ boolValue: z.boolean() }),
    z.strictObject({ intValue: z.union([z.string().regex(/^-?\d+$/), z.number().int()]) }),
    z.strictObject({ doubleValue: z.number() }),
    z.strictObject({ arrayValue: z.object({ values: z.array(anyValue).optional() }) }),
    z.strictObject({ kvlistValue: z.object({ values: z.array(keyValue).optional() }) }),
    z.strictObject({ bytesValue: z.string() }),
  ]),
);
const keyValue = z.object({ key: z.string().min(1), value: anyValue });
const attributes = z.array(keyValue).default([]);

const span = z.object({
  traceId: hex(16),
  spanId: hex(8),
  traceState: z.string().optional(),
  /** Absent or empty for a root span. */
  parentSpanId: z.union([hex(8), z.literal("")]).optional(),
  flags: z.number().int().optional(),
  name: z.string().min(1),
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: z.number().int().min(0).max(5),
  startTimeUnixNano: uint64,
  endTimeUnixNano: uint64,
  attributes,
  droppedAttributesCount: z.number().int().optional(),
  events: z.array(z.object({ timeUnixNano: uint64, name: z.string(), attributes })).default([]),
  links: z.array(z.object({ traceId: hex(16), spanId: hex(8), attributes })).default([]),
  /** Status code: 0 unset, 1 ok, 2 error. */
  status: z
    .object({ code: z.number().int().min(0).max(2).optional(), message: z.string().optional() })
    .default({}),
});

const exportTraceServiceRequest = z.object({
  resourceSpans: z.array(
    z.object({
      resource: z.object({ attributes }).optional(),
      scopeSpans: z.array(
        z.object({
          scope: z.object({ name: z.string(), version: z.string().optional() }).optional(),
          spans: z.array(span),
        }),
      ),
    }),
  ),
});

export type AttributeValue = string | number | boolean | AttributeValue[] | { [key: string]: AttributeValue };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttributeValue>;
  status: { code: number; message: string | undefined };
  resource: Record<string, AttributeValue>;
  scope: string | undefined;
}

function decodeValue(v: AnyValue): AttributeValue {
  if ("stringValue" in v) return v.stringValue;
  if ("boolValue" in v) return v.boolValue;
  if ("intValue" in v) return Number(v.intValue);
  if ("doubleValue" in v) return v.doubleValue;
  if ("arrayValue" in v) return (v.arrayValue.values ?? []).map(decodeValue);
  if ("kvlistValue" in v) return attributesOf(v.kvlistValue.values ?? []);
  return v.bytesValue;
}

function attributesOf(list: readonly { key: string; value: AnyValue }[]): Record<string, AttributeValue> {
  return Object.fromEntries(list.map((kv) => [kv.key, decodeValue(kv.value)]));
}

/** The spans of one decoded export request. */
export function decodeTraces(body: unknown): ReceivedSpan[] {
  const request = exportTraceServiceRequest.parse(body);
  return request.resourceSpans.flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes ?? []);
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: s.kind,
        startNs: s.startTimeUnixNano,
        endNs: s.endTimeUnixNano,
        attributes: attributesOf(s.attributes),
        status: { code: s.status.code ?? 0, message: s.status.message },
        resource,
        scope: ss.scope?.name,
      })),
    );
  });
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Each export's request headers, in order. */
  readonly requests: Record<string, string | string[] | undefined>[];
  /** Bodies refused, and why. */
  readonly refused: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const refused: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const answer = (status: number, body: object) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method !== "POST" || req.url !== "/v1/traces") return answer(404, { message: "not found" });
      if (!req.headers["content-type"]?.startsWith("application/json")) {
        refused.push(`content-type ${req.headers["content-type"]}`);
        return answer(415, { message: "this receiver takes the JSON encoding" });
      }
      try {
        spans.push(...decodeTraces(JSON.parse(Buffer.concat(parts).toString("utf8"))));
      } catch (err) {
        refused.push((err as Error).message);
        return answer(400, { message: (err as Error).message });
      }
      requests.push(req.headers);
      // ExportTraceServiceResponse: everything taken.
      answer(200, {});
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    refused,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
