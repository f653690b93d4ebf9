// The chat's recovery on virtual time, with scripted targets: hedges, retries within the budget,
// the fallback, a stall taken up again with no word said twice, and the circuit.
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../../src/api/types/index.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { DEFAULT_SERVICE_DEADLINES } from "../../../src/session/config.ts";
import type { ChatRoute } from "../../../src/session/resilience/chat-attempt.ts";
import { ServiceFailure } from "../../../src/session/resilience/failure.ts";
import { chatRecovery } from "../../../src/session/resilience/request-signals.ts";
import { ResilientChat } from "../../../src/session/resilience/resilient-chat.ts";
import { advance, healthOn, Reader, route, ScriptedSource, type Step, says } from "./scripted-chat.ts";

const ASKED: ChatMessage[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "When do you open?" },
];
const HANG: Step[] = [];
const unavailable = (retryAfterMs?: number) =>
  new ServiceFailure("HTTP 503: busy", "status_503", { status: 503, retryAfterMs });

function setUp(scripts: { own: Step[][]; fallback?: Step[][] }, hedge = true) {
  const clock = new VirtualClock();
  const { health, sink } = healthOn(clock);
  const own = new ScriptedSource(clock, scripts.own);
  const fb = scripts.fallback ? new ScriptedSource(clock, scripts.fallback) : undefined;
  const primary: ChatRoute = route(health, own, "svc-main");
  const fallback = fb ? route(health, fb, "svc-spare", true) : undefined;
  const chat = new ResilientChat({
    primary,
    fallback,
    deadlines: DEFAULT_SERVICE_DEADLINES,
    hedge,
    clock,
    onHedge: () => health.hedged(),
    onFallback: () => health.fellBack("chat"),
  });
  const turn = new AbortController();
  const read = () => new Reader(chat.stream(ASKED, [], turn.signal));
  return { clock, health, sink, own, fb, chat, turn, read, primary };
}

describe("a late first chunk", () => {
  it("starts a hedged request to the fallback, uses the first to answer and cancels the other", async () => {
    const t = setUp({ own: [HANG], fallback: [says(["We open ", "at nine."])] });
    const reply = t.read();
    await advance(t.clock, 1490);
    expect(t.fb!.requests).toHaveLength(0);
    await advance(t.clock, 200);
    expect(t.fb!.requests).toHaveLength(1);
    expect(t.fb!.requests[0]!.at).toBe(1500);
    await advance(t.clock, 300);
    expect(reply.done).toBe(true);
    expect(reply.text).toBe("We open at nine.");
    expect(t.own.requests[0]!.signal.aborted).toBe(true);
    expect(chatRecovery(t.turn.signal)).toEqual({ hedgedRequests: 1, fallbacks: 1 });
    expect(t.sink.hedges).toBe(1);
    // The late request lost: a timeout of its target.
    expect(t.sink.failures).toEqual([{ endpoint: "chat", kind: "timeout" }]);
  });

  it("hedges to the same model when there is no fallback, and the first one may still win", async () => {
    const late: Step[] = [
      { after: 1600, text: "Nine o'clock." },
      { after: 10, end: true },
    ];
    const t = setUp({ own: [late, HANG] });
    const reply = t.read();
    await advance(t.clock, 1700);
    expect(t.own.requests.map((r) => r.at)).toEqual([0, 1500]);
    await advance(t.clock, 50);
    expect(reply.text).toBe("Nine o'clock.");
    expect(t.own.requests[1]!.signal.aborted).toBe(true);
    expect(chatRecovery(t.turn.signal)).toEqual({ hedgedRequests: 1, fallbacks: 0 });
  });

  it("sends no second request when hedging is off", async () => {
    const late: Step[] = [
      { after: 2000, text: "Nine." },
      { after: 10, end: true },
    ];
    const t = setUp({ own: [late] }, false);
    const reply = t.read();
    await advance(t.clock, 2100);
    expect(t.own.requests).toHaveLength(1);
    expect(reply.text).toBe("Nine.");
    expect(chatRecovery(t.turn.signal)).toBeUndefined();
  });

  it("gives up at chatTotalMs when nothing answers: both requests stopped, the turn told", async () => {
    const t = setUp({ own: [HANG, HANG] });
    const reply = t.read();
    await advance(t.clock, 2990);
    expect(reply.done).toBe(false);
    await advance(t.clock, 20);
    expect(reply.done).toBe(true);
    expect(reply.error).toBeInstanceOf(ServiceFailure);
    expect((reply.error as ServiceFailure).kind).toBe("timeout");
    expect(t.own.requests.every((r) => r.signal.aborted)).toBe(true);
  });
});

describe("a failure before any words", () => {
  it("is sent again at once while it fits the budget", async () => {
    const t = setUp({ own: [[{ after: 100, error: unavailable() }], says(["Nine."])] });
    const reply = t.read();
    await advance(t.clock, 300);
    expect(t.own.requests.map((r) => r.at)).toEqual([0, 100]);
    expect(reply.text).toBe("Nine.");
    expect(t.sink.failures).toEqual([{ endpoint: "chat", kind: "status_503" }]);
  });

  it("waits the retry-after the service asked for when that fits", async () => {
    const t = setUp({ own: [[{ after: 100, error: unavailable(800) }], says(["Nine."])] });
    const reply = t.read();
    await advance(t.clock, 850);
    expect(t.own.requests).toHaveLength(1);
    await advance(t.clock, 200);
    expect(t.own.requests.map((r) => r.at)).toEqual([0, 900]);
    await advance(t.clock, 100);
    expect(reply.text).toBe("Nine.");
  });

  it("goes to the fallback when the retry-after does not fit", async () => {
    const t = setUp({
      own: [[{ after: 100, error: unavailable(5000) }]],
      fallback: [says(["Nine, from the spare."])],
    });
    const reply = t.read();
    await advance(t.clock, 300);
    expect(t.own.requests).toHaveLength(1);
    expect(t.fb!.requests.map((r) => r.at)).toEqual([100]);
    expect(reply.text).toBe("Nine, from the spare.");
    expect(chatRecovery(t.turn.signal)).toEqual({ hedgedRequests: 0, fallbacks: 1 });
  });

  it("fails the reply when neither fits: the turn says its apology", async () => {
    const t = setUp({
      own: [[{ after: 100, error: unavailable(5000) }]],
      fallback: [[{ after: 100, error: unavailable(5000) }]],
    });
    const reply = t.read();
    await advance(t.clock, 400);
    expect(reply.done).toBe(true);
    expect((reply.error as ServiceFailure).kind).toBe("status_503");
    expect(reply.text).toBe("");
  });

  it("never sends a refused request to the same target again", async () => {
    const refused = new ServiceFailure("HTTP 400: bad model", "refused", { status: 400 });
    const alone = setUp({ own: [[{ after: 50, error: refused }], says(["never"])] });
    const r1 = alone.read();
    await advance(alone.clock, 500);
    expect(alone.own.requests).toHaveLength(1);
    expect((r1.error as ServiceFailure).kind).toBe("refused");

    const withFallback = setUp({ own: [[{ after: 50, error: refused }]], fallback: [says(["Nine."])] });
    const r2 = withFallback.read();
    await advance(withFallback.clock, 500);
    expect(withFallback.own.requests).toHaveLength(1);
    expect(r2.text).toBe("Nine.");
  });
});

describe("a stream that stalls after its first words", () => {
  const stalled: Step[] = [
    { after: 100, text: "We open" },
    { after: 50, text: " at nine," },
  ];

  it("is taken up by a new request whose repeated words are skipped", async () => {
    const t = setUp({ own: [stalled, says(["We open ", "at nine, ", "Monday to ", "Friday."])] });
    const reply = t.read();
    await advance(t.clock, 1600);
    expect(reply.text).toBe("We open at nine,");
    expect(t.own.requests).toHaveLength(1);
    await advance(t.clock, 100);
    // 150 ms + chatGapMs after the request: stalled.
    expect(t.own.requests.map((r) => r.at)).toEqual([0, 1650]);
    expect(t.own.requests[0]!.signal.aborted).toBe(true);
    await advance(t.clock, 400);
    expect(reply.done).toBe(true);
    expect(reply.text).toBe("We open at nine, Monday to Friday.");
    expect(t.sink.failures).toEqual([{ endpoint: "chat", kind: "stall" }]);
  });

  it("is taken up by the fallback when there is one", async () => {
    const t = setUp({ own: [stalled], fallback: [says(["We open at nine, ", "Monday to Friday."])] });
    const reply = t.read();
    await advance(t.clock, 2200);
    expect(t.own.requests).toHaveLength(1);
    expect(t.fb!.requests.map((r) => r.at)).toEqual([1650]);
    expect(reply.text).toBe("We open at nine, Monday to Friday.");
    expect(chatRecovery(t.turn.signal)).toEqual({ hedgedRequests: 0, fallbacks: 1 });
  });

  it("asks for a continuation when the new request words it otherwise", async () => {
    const other = says(["Our hours ", "are nine to five."]);
    const t = setUp({ own: [stalled, other, says(["Monday to Friday."])] });
    const reply = t.read();
    await advance(t.clock, 2500);
    expect(t.own.requests).toHaveLength(3);
    const asked = t.own.requests[2]!.messages;
    expect(asked.slice(0, 2)).toEqual(ASKED);
    expect(asked[2]).toEqual({ role: "assistant", content: "We open at nine," });
    expect(asked[3]).toMatchObject({ role: "system" });
    expect(reply.done).toBe(true);
    expect(reply.text).toBe("We open at nine, Monday to Friday.");
  });

  it("takes the tool calls of the stream whose reply is used, only once it ended well", async () => {
    const call = { id: "c1", name: "lookup_hours", arguments: "{}" };
    const cut: Step[] = [
      { after: 100, text: "Let me check." },
      { after: 10, call },
      { after: 10, error: new ServiceFailure("cut", "connection") },
    ];
    const whole: Step[] = [
      { after: 50, text: "Let me check." },
      { after: 10, call: { ...call, id: "c2" } },
      { after: 10, end: true },
    ];
    const t = setUp({ own: [cut, whole] });
    const reply = t.read();
    await advance(t.clock, 500);
    expect(reply.done).toBe(true);
    expect(reply.text).toBe("Let me check.");
    expect(reply.events.flatMap((e) => (e.type === "tool-call" ? [e.call.id] : []))).toEqual(["c2"]);
  });
});

describe("an open circuit", () => {
  it("sends the reply straight to the fallback, then probes the target and closes on its success", async () => {
    const failing = Array.from({ length: 5 }, () => [{ after: 10, error: unavailable() }]);
    const t = setUp({
      own: [...failing, says(["Probe answered."])],
      fallback: [says(["Spare 1."]), says(["Spare 2."]), says(["Spare 3."])],
    });
    // Five failures in a row (a reply's own retries): the fifth opens the circuit, so the rest of
    // that reply goes to the fallback.
    const first = t.read();
    await advance(t.clock, 300);
    expect(first.text).toBe("Spare 1.");
    expect(t.own.requests).toHaveLength(5);
    expect(t.sink.circuits).toEqual([{ target: "svc-main@http://svc", state: "open" }]);

    const second = t.read();
    await advance(t.clock, 300);
    expect(second.text).toBe("Spare 2.");
    expect(t.own.requests).toHaveLength(5);

    await advance(t.clock, 20_000);
    const probe = t.read();
    await advance(t.clock, 300);
    expect(probe.text).toBe("Probe answered.");
    expect(t.own.requests).toHaveLength(6);
    expect(t.sink.circuits.map((c) => c.state)).toEqual(["open", "half-open", "closed"]);
  });
});

it("stops its requests when the turn is over", async () => {
  const t = setUp({ own: [[{ after: 100, text: "We open" }]] });
  const reply = t.read();
  await advance(t.clock, 200);
  t.turn.abort();
  await advance(t.clock, 20);
  expect(reply.done).toBe(true);
  expect(reply.error).toBeUndefined();
  expect(t.own.requests[0]!.signal.aborted).toBe(true);
});
