// The spans of one call as the session reports its turns, on virtual time, recorded by the SDK's own
// in-memory exporter: the turn that never reached a stage, the tool call its turn left behind, the
// failures, the turn the call's end cut off, and which span a request to the service names.
import type { HrTime } from "@opentelemetry/api";
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { afterEach, describe, expect, it } from "vitest";
import { ATTR, SPAN } from "../../../app/tracing/attributes.ts";
import { CallSpans } from "../../../app/tracing/call-spans.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import type { TurnReport } from "../../../src/session/call-trace.ts";
import type { ChatModel } from "../../../src/session/services.ts";
import { until } from "../../helpers/until.ts";

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
const tracer = provider.getTracer("test");
afterEach(() => exporter.reset());

function call(clock: VirtualClock): CallSpans {
  return new CallSpans(tracer, clock, {
    callId: "c1",
    agent: "support",
    transport: "sip",
    direction: "outbound",
  });
}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const one = (name: string) => {
  const found = named(name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
};
const msOf = (t: HrTime) => t[0] * 1e3 + t[1] / 1e6;
/** A span's start and end, ms after `from`'s start. */
const window = (s: ReadableSpan, from: ReadableSpan) => [
  Math.round(msOf(s.startTime) - msOf(from.startTime)),
  Math.round(msOf(s.endTime) - msOf(from.startTime)),
];
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

const report = (over: Partial<TurnReport>): TurnReport => ({
  at: 0,
  timings: {},
  caller: undefined,
  interrupted: false,
  cancelled: false,
  error: undefined,
  metrics: {},
  ...over,
});

describe("a call's spans", () => {
  it("ends a stage the turn never reached with the turn, and says it was not completed", async () => {
    const clock = new VirtualClock(1000);
    const c = call(clock);
    // The caller paused at 1000; the answer started held at 1300 and was dropped at 1500, unheard.
    clock.advance(300);
    const turn = c.trace.turnStarted({ kind: "reply", since: 1000, at: 1300, held: true, source: "speech" });
    const caller = { speechEndAt: 1000, asrMs: 250, recognizedAt: 1300 };
    const timings = { chatStartAt: 1300 };
    turn.ended(report({ at: 1500, caller, timings, cancelled: true }));
    await provider.forceFlush();
    const t = one(SPAN.turn);
    expect(t.attributes).toMatchObject({ [ATTR.turnOutcome]: "cancelled", [ATTR.turnHeld]: true });
    expect(window(one(SPAN.endOfTurn), t)).toEqual([0, 500]);
    expect(one(SPAN.endOfTurn).attributes[ATTR.completed]).toBe(false);
    expect(window(one(SPAN.recognition), t)).toEqual([50, 300]);
    expect(one(SPAN.recognition).attributes[ATTR.completed]).toBe(true);
    expect(window(one(SPAN.firstToken), t)).toEqual([300, 500]);
    expect(one(SPAN.firstToken).attributes[ATTR.completed]).toBe(false);
    expect(named(SPAN.firstAudio)).toEqual([]);
  });

  it("ends a tool call its turn left behind with the turn, and marks a failed tool and a failed turn", async () => {
    const clock = new VirtualClock(0);
    const c = call(clock);
    const turn = c.trace.turnStarted({ kind: "reply", since: 0, at: 0, held: false, source: "dtmf" });
    const failing = turn.toolCall({ id: "t1", name: "lookup_order", arguments: "{}" }, "http", 100);
    failing.ended(300, { kind: "result", content: "error: the lookup_order service answered HTTP 503" });
    const hanging = turn.toolCall({ id: "t2", name: "crm", arguments: "{}" }, "mcp", 400);
    turn.ended(report({ at: 900, error: "chat: connection lost mid-stream" }));
    hanging.ended(5000, { kind: "result", content: "late" });
    await provider.forceFlush();
    const t = one(SPAN.turn);
    expect(t.attributes[ATTR.turnOutcome]).toBe("failed");
    expect(t.status).toEqual({ code: 2, message: "chat: connection lost mid-stream" });
    const lookup = one(SPAN.tool("lookup_order"));
    expect(lookup.status.code).toBe(2);
    expect(lookup.attributes).toMatchObject({ [ATTR.toolKind]: "http", [ATTR.toolOutcome]: "result" });
    const crm = one(SPAN.tool("crm"));
    expect(crm.attributes).toMatchObject({ [ATTR.toolKind]: "mcp", [ATTR.toolOutcome]: "abandoned" });
    expect(window(crm, t)).toEqual([400, 900]);
    for (const tool of [lookup, crm]) expect(parentOf(tool)).toBe(t.spanContext().spanId);
  });

  it("ends at the call's end a turn the call's end cut off, reported or not", async () => {
    const clock = new VirtualClock(0);
    const c = call(clock);
    const reported = c.trace.turnStarted({ kind: "reply", since: 0, at: 0, held: false, source: undefined });
    // A turn the session never reports.
    c.trace.turnStarted({
      kind: "fixed",
      since: 100,
      at: 100,
      held: false,
      source: undefined,
    });
    clock.advance(700);
    c.ended({ outcome: "caller_hangup", reason: "stop" });
    // The session reports the cut turn a moment after the end (its result is a promise).
    reported.ended(report({ at: 701, interrupted: true }));
    await until(() => named(SPAN.turn).length === 2, "the unreported turn to end");
    const callSpan = one(SPAN.call);
    expect(callSpan.attributes).toMatchObject({
      [ATTR.outcome]: "caller_hangup",
      [ATTR.direction]: "outbound",
      [ATTR.turns]: 2,
    });
    for (const t of named(SPAN.turn)) {
      expect(t.attributes[ATTR.turnOutcome]).toBe("call_ended");
      expect(t.endTime).toEqual(callSpan.endTime);
      expect(parentOf(t)).toBe(callSpan.spanContext().spanId);
    }
  });

  it("names the turn in a chat request's traceparent, the call in the others, and the call in its logs", async () => {
    const clock = new VirtualClock(0);
    const c = call(clock);
    const turn = c.trace.turnStarted({ kind: "reply", since: 0, at: 0, held: false, source: undefined });
    const signal = new AbortController().signal;
    const asked: AbortSignal[] = [];
    const model: ChatModel = {
      stream(_m, _t, s) {
        asked.push(s);
        return (async function* () {
          yield* [];
        })();
      },
    };
    void turn.chat(model).stream([], [], signal);
    expect(asked).toEqual([signal]);
    turn.ended(report({ at: 10 }));
    c.ended({ outcome: "agent_hangup", reason: "done" });
    await provider.forceFlush();
    const callSc = one(SPAN.call).spanContext();
    const turnSc = one(SPAN.turn).spanContext();
    expect(c.requestHeaders(signal)).toEqual({ traceparent: `00-${turnSc.traceId}-${turnSc.spanId}-01` });
    expect(c.requestHeaders(new AbortController().signal)).toEqual({
      traceparent: `00-${callSc.traceId}-${callSc.spanId}-01`,
    });
    expect(c.requestHeaders()).toEqual(c.requestHeaders(new AbortController().signal));
    expect(c.logFields).toEqual({ trace_id: callSc.traceId, span_id: callSc.spanId });
  });
});
