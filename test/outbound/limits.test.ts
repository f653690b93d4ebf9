// The limits on placing calls (429 with Retry-After) and the POST /calls body's validation.
import Fastify from "fastify";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { registerOutboundRoutes } from "../../app/http/outbound-routes.ts";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { loadConfig } from "../../src/config/config.ts";
import { OutboundCalls } from "../../src/outbound/calls.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import { DialLimits } from "../../src/outbound/limits.ts";
import { parseDialBody } from "../../src/outbound/request.ts";
import { TranscriptStore } from "../../src/records/call-record.ts";

describe("DialLimits", () => {
  it("refuses beyond maxConcurrent until a call ends", () => {
    let now = 0;
    const limits = new DialLimits(2, 100, () => now);
    expect(limits.take().ok).toBe(true);
    expect(limits.take().ok).toBe(true);
    const refused = limits.take();
    expect(refused).toMatchObject({ ok: false, retryAfterS: 5 });
    limits.release();
    now += 1000;
    expect(limits.take().ok).toBe(true);
  });

  it("refuses beyond callsPerSecond, saying when a place frees", () => {
    let now = 0;
    const limits = new DialLimits(100, 0.5, () => now);
    expect(limits.take().ok).toBe(true);
    const refused = limits.take();
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfterS).toBe(2);
    now += 2000;
    expect(limits.take().ok).toBe(true);
  });
});

describe("POST /calls body", () => {
  it("keeps numbers with their + and SIP URIs as given", () => {
    expect(parseDialBody({ to: "+1 (555) 010-0100", via: "sip" })).toEqual({
      ok: true,
      body: { to: "+15550100100", via: "sip" },
    });
    expect(parseDialBody({ to: "sip:alice@pbx.example.com", via: "sip" })).toMatchObject({
      ok: true,
      body: { to: "sip:alice@pbx.example.com" },
    });
  });

  it.each([
    [{ to: "1", via: "sip" }, "to"],
    [{ to: "sip:alice@pbx", via: "twilio" }, "to"],
    [{ to: "+15550100", via: "sip", ringTimeoutS: 4 }, "ringTimeoutS"],
    [{ to: "+15550100", via: "sip", machineDetection: "maybe" }, "machineDetection"],
    [{ to: "+15550100", via: "sip", variables: { "a b": "x" } }, "variables.a b"],
    [{ to: "+15550100", via: "sip", colour: "red" }, "colour"],
    [[], "body"],
  ])("%j is refused naming %s", (body, field) => {
    const r = parseDialBody(body);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.field).toBe(field);
  });
});

describe("POST /calls over the limits", () => {
  it("answers 429 with Retry-After beyond outbound.maxConcurrent", async () => {
    const config = loadConfig({ env: { OUTBOUND_MAX_CONCURRENT: "1", OUTBOUND_CALLS_PER_SECOND: "100" } });
    // The carrier keeps the call ringing: the limit is what is tested here.
    const ringing: Dialer = () => ({ cancel: () => {} });
    const calls = new OutboundCalls({
      config: () => config.outbound,
      dialers: () => ({ sip: ringing }),
      agents: () => new AgentDirectory(config),
      limits: new DialLimits(config.outbound.maxConcurrent, config.outbound.callsPerSecond),
      events: new TranscriptStore(undefined),
      startSession: () => ({ end: () => {} }),
      tts: () => {
        throw new Error("not used");
      },
      log: pino({ level: "silent" }),
    });
    const http = Fastify();
    registerOutboundRoutes(http, calls);
    const post = () =>
      http.inject({ method: "POST", url: "/calls", payload: { to: "+15550100", via: "sip" } });
    expect((await post()).statusCode).toBe(202);
    const refused = await post();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(refused.json().error.message).toMatch(/outbound.maxConcurrent/);
    await http.close();
  });
});
