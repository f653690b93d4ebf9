// A call's OpenTelemetry trace, end to end: the real bridge on the real local service, calls placed
// by the Twilio simulator over real sockets, the spans exported by the SDK over OTLP/HTTP to a
// receiver here that decodes them by the protocol's JSON encoding (test/helpers/otlp-receiver.ts).
// The requests the bridge makes to the service are read as they go out and come in (Node's HTTP
// diagnostics channels): each carries a traceparent of the call's trace.
import diagnostics from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import type { ClientRequest, IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { ATTR, SPAN } from "../../app/tracing/attributes.ts";
import type { CallEvent, CallRecord } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "../helpers/otlp-receiver.ts";
import { buildScene, speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const HOTWORDS = "open,opening,hours,where,located,address,order,status,person,goodbye,bye,thanks,that's all";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** A request the bridge sent to the service: its path and traceparent, seen leaving or arriving. */
interface SeenRequest {
  side: "client" | "server";
  path: string;
  traceparent: string | undefined;
}

let receiver: OtlpReceiver;
let bridge: Bridge;
let dir: string;
const seen: SeenRequest[] = [];
const calls: CallRecord[] = [];
let servicePort = "";

const onClient = (m: unknown) => {
  const request = (m as { request: ClientRequest }).request;
  if (request.getHeader("host") !== `127.0.0.1:${servicePort}`) return;
  const tp = request.getHeader("traceparent");
  seen.push({ side: "client", path: request.path, traceparent: typeof tp === "string" ? tp : undefined });
};
const onServer = (m: unknown) => {
  const { request, server } = m as { request: IncomingMessage; server: Server };
  if (String((server.address() as AddressInfo).port) !== servicePort) return;
  const tp = request.headers.traceparent;
  seen.push({
    side: "server",
    path: request.url ?? "",
    traceparent: typeof tp === "string" ? tp : undefined,
  });
};

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-traces-"));
  const config = twilioTestConfig(dir, {
    SVC_HOTWORDS: HOTWORDS,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=test%20key",
    OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=e2e",
  });
  bridge = await startTwilioTestBridge(config);
  servicePort = new URL(bridge.localService!.url).port;
  diagnostics.subscribe("http.client.request.start", onClient);
  diagnostics.subscribe("http.server.request.start", onServer);

  const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });
  const place = async (opts: Partial<Parameters<typeof simulateCall>[0]>) => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      ...opts,
    });
    calls.push(r.transcript as CallRecord);
  };
  // A whole call: greeting, a question, goodbye (the agent hangs up with its end_call tool).
  await place({ says: [say("Where are you located?"), say("That's all, goodbye.")], maxSeconds: 40 });
  // The caller talks over the greeting: that turn is cut.
  const scene = buildScene(
    [
      { silenceMs: 1700 },
      { say: "Wait, wait, I need to change the address on my order please." },
      { silenceMs: 5000 },
    ],
    { rate: 8000 },
  );
  await place({ caller: { samples: scene.pcm, rate: 8000 }, maxSeconds: 15 });
  // The caller hangs up while the greeting plays.
  await place({ maxSeconds: 1.5 });
  diagnostics.unsubscribe("http.client.request.start", onClient);
  diagnostics.unsubscribe("http.server.request.start", onServer);
  // Shutting down exports what the batch still holds.
  await bridge.close(0);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

const callSpanOf = (callId: string) =>
  receiver.spans.find((s) => s.name === SPAN.call && s.attributes[ATTR.callId] === callId);
const traceOf = (root: ReceivedSpan) => receiver.spans.filter((s) => s.traceId === root.traceId);
const childrenOf = (parent: ReceivedSpan) => receiver.spans.filter((s) => s.parentSpanId === parent.spanId);
const ms = (s: ReceivedSpan) => Number(s.endNs - s.startNs) / 1e6;
const endOf = (record: CallRecord) =>
  record.events.find((e): e is Extract<CallEvent, { type: "call-end" }> => e.type === "call-end");

describe("a call's trace", () => {
  it("is exported over OTLP/HTTP in the protocol's encoding, with the configured headers and resource", () => {
    expect(receiver.refused).toEqual([]);
    expect(receiver.requests.length).toBeGreaterThan(0);
    expect(receiver.requests.every((h) => h["x-collector-key"] === "test key")).toBe(true);
    const call = callSpanOf(calls[0]!.callId)!;
    expect(call.resource).toMatchObject({
      "service.name": "voice-bridge",
      "deployment.environment": "e2e",
      "service.instance.id": bridge.instance,
    });
  });

  it("is one tree per call: call → turns → their stages and tool calls, each inside its parent", () => {
    for (const record of calls) {
      const call = callSpanOf(record.callId);
      expect(call, `the call span of ${record.callId}`).toBeDefined();
      expect(call!.parentSpanId).toBeUndefined();
      expect(call!.attributes).toMatchObject({
        [ATTR.agent]: "default",
        [ATTR.transport]: "twilio",
        [ATTR.direction]: "inbound",
        [ATTR.outcome]: endOf(record)!.outcome,
        [ATTR.endReason]: endOf(record)!.reason,
      });
      const spans = traceOf(call!);
      const byId = new Map(spans.map((s) => [s.spanId, s]));
      for (const s of spans) {
        expect(s.endNs >= s.startNs, `${s.name} ends after it starts`).toBe(true);
        if (s === call) continue;
        const parent = byId.get(s.parentSpanId ?? "");
        expect(parent, `${s.name}'s parent is in the trace`).toBeDefined();
        expect(s.startNs >= parent!.startNs, `${s.name} starts within ${parent!.name}`).toBe(true);
        expect(s.endNs <= parent!.endNs, `${s.name} ends within ${parent!.name}`).toBe(true);
      }
      const turns = childrenOf(call!);
      expect(turns.length).toBeGreaterThan(0);
      expect(turns.every((t) => t.name === SPAN.turn)).toBe(true);
      expect(call!.attributes[ATTR.turns]).toBe(turns.length);
    }
  });

  it("has a span per turn with its stages, the figures the record files, and the tool call", () => {
    const record = calls[0]!;
    const turns = childrenOf(callSpanOf(record.callId)!).sort((a, b) => Number(a.startNs - b.startNs));
    // The greeting: a reply of the model to no caller words, so no end of turn nor recognition.
    const greeting = turns[0]!;
    expect(greeting.attributes).toMatchObject({ [ATTR.turnIndex]: 1, [ATTR.turnOutcome]: "heard" });
    expect(greeting.attributes[ATTR.turnSource]).toBeUndefined();
    expect(
      childrenOf(greeting)
        .map((s) => s.name)
        .sort(),
    ).toEqual([SPAN.firstAudio, SPAN.firstToken]);
    const replies = turns.filter(
      (t) => t.attributes[ATTR.turnSource] === "speech" && t.attributes[ATTR.turnOutcome] !== "cancelled",
    );
    expect(replies.length, JSON.stringify(record.turns)).toBeGreaterThanOrEqual(2);
    for (const turn of replies) {
      const stages = childrenOf(turn);
      const names = stages.map((s) => s.name);
      for (const stage of [SPAN.endOfTurn, SPAN.recognition, SPAN.firstToken, SPAN.firstAudio])
        expect(names, `turn ${turn.attributes[ATTR.turnIndex]}`).toContain(stage);
      // The stages are the turn's figures: the same timings its metrics are made of.
      const firstToken = stages.find((s) => s.name === SPAN.firstToken)!;
      expect(
        Math.abs(ms(firstToken) - Number(turn.attributes["voice.turn.llm_ttft_ms"])),
      ).toBeLessThanOrEqual(1);
      const recognition = stages.find((s) => s.name === SPAN.recognition)!;
      expect(Math.abs(ms(recognition) - Number(turn.attributes["voice.turn.asr_ms"]))).toBeLessThanOrEqual(1);
    }
    // Each answer heard is a turn span with the record's voice-to-voice figure.
    const recorded = record.turns.flatMap((t) =>
      t.role === "assistant" && t.metrics.voiceToVoiceMs ? [t.metrics.voiceToVoiceMs] : [],
    );
    const traced = turns.flatMap((t) => {
      const v = t.attributes["voice.turn.voice_to_voice_ms"];
      return typeof v === "number" ? [v] : [];
    });
    expect(traced.sort()).toEqual(recorded.sort());
    // Goodbye: the agent's end_call, a tool span in its turn.
    const tool = receiver.spans.find(
      (s) => s.traceId === turns[0]!.traceId && s.name === SPAN.tool("end_call"),
    );
    expect(tool?.attributes).toMatchObject({
      [ATTR.genAiOperation]: "execute_tool",
      [ATTR.genAiToolName]: "end_call",
      [ATTR.toolKind]: "builtin",
      [ATTR.toolOutcome]: "end-call",
    });
    expect(turns.map((t) => t.spanId)).toContain(tool!.parentSpanId);
  });

  it("ends the spans of a cut turn and of a call hung up mid-reply, saying so", () => {
    const greetingOf = (call: ReceivedSpan) =>
      childrenOf(call).find((t) => t.attributes[ATTR.turnIndex] === 1);
    const cut = greetingOf(callSpanOf(calls[1]!.callId)!);
    expect(cut?.attributes[ATTR.turnOutcome]).toBe("interrupted");
    expect(cut?.attributes["voice.turn.barge_in_ms"]).toBeGreaterThan(0);
    const hungUp = callSpanOf(calls[2]!.callId)!;
    expect(hungUp.attributes[ATTR.outcome]).toBe("caller_hangup");
    const greeting = greetingOf(hungUp);
    expect(greeting?.attributes[ATTR.turnOutcome]).toBe("call_ended");
    expect(greeting!.endNs).toBe(hungUp.endNs);
  });

  it("carries the call's trace to the service: a traceparent on every request, the turn's on a chat request", () => {
    const traceIds = new Map(calls.map((r) => [callSpanOf(r.callId)!.traceId, r.callId]));
    const turnIds = new Set(receiver.spans.filter((s) => s.name === SPAN.turn).map((s) => s.spanId));
    const paths = (side: SeenRequest["side"]) =>
      seen.filter((s) => s.side === side).map((s) => s.path.split("?")[0]);
    expect(paths("client")).toEqual(
      expect.arrayContaining(["/v1/chat/completions", "/v1/realtime/audio", "/v1/audio/asr/sse"]),
    );
    expect(paths("server")).toEqual(expect.arrayContaining(["/v1/chat/completions", "/v1/audio/asr/sse"]));
    for (const request of seen) {
      const m = TRACEPARENT.exec(request.traceparent ?? "");
      expect(m, `${request.side} ${request.path}: ${request.traceparent}`).not.toBeNull();
      expect(traceIds.has(m![1]!), `${request.path} is in a call's trace`).toBe(true);
      if (request.path.startsWith("/v1/chat/completions")) expect(turnIds.has(m![2]!)).toBe(true);
    }
  });
});
