// Several agents on one bridge, through the Twilio simulator and the real local service: each
// call is routed to its agent by the number called, hears that agent's greeting (with the
// caller's number, a call parameter, a webhook's variable) in that agent's voice; the sales
// agent's HTTP tool gets the call's variables in its URL and body; the call-start webhook can
// reject; the analysis reaches the record and the signed end-of-call report; a reload during a
// live call leaves it its agent and gives the next call the new one, and a broken config is refused.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import type { CallReport } from "../../src/records/reports/report.ts";
import { CallRejectedError, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { type AgentsFixture, agentsFixture, REJECTED_CALLER, until } from "../helpers/agents-fixture.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { medianF0 } from "../service/helpers/f0.ts";

let f: AgentsFixture;
let bridge: Bridge;

beforeAll(async () => {
  f = await agentsFixture();
  bridge = await startBridge(f.load(), pino({ level: process.env.E2E_LOG ?? "silent" }), {
    readConfig: () => f.load(),
  });
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await f?.server.close();
  if (f) rmSync(f.dir, { recursive: true, force: true });
});

const record = (r: { transcript?: unknown }) => r.transcript as CallRecord;
const greeting = (r: { transcript?: unknown }) => record(r).turns.find((t) => t.role === "assistant");
function report(callId: string): CallReport | undefined {
  const req = f.server
    .to("/reports")
    .find((q) => (JSON.parse(q.body.toString()) as CallReport).callId === callId);
  return req && (JSON.parse(req.body.toString()) as CallReport);
}

describe("two agents on one Twilio number range", () => {
  let salesPitch = Number.NaN;

  it("routes +15550001 to sales: its greeting with the call's variables, its tool, its analysis", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      from: "+15005550006",
      to: "+15550001",
      params: { account: "A-17" },
      dtmf: [{ digit: "1", atMs: 4000 }],
      hangUpAfterMs: 4000,
      maxSeconds: 16,
    });
    expect(record(r).agent).toBe("sales");
    expect(greeting(r)).toMatchObject({ generated: "Sales line. Hello +15005550006, account A-17." });
    // The HTTP tool: the account in its URL, the caller and the line in its body.
    const tool = await until(() => f.server.to("/accounts/A-17")[0], "the tool's request");
    expect(JSON.parse(tool.body.toString())).toEqual({
      what: "balance",
      caller: "+15005550006",
      line: "+15550001",
      via: "twilio",
    });
    expect(record(r).turns.some((t) => t.role === "assistant" && t.text.includes("42 dollars"))).toBe(true);
    // The analysis: in the record, then in the signed report.
    const sent = await until(() => report(r.callSid), "the call's report");
    expect(sent.agent).toBe("sales");
    expect(sent.analysis).toMatchObject({ status: "done", fields: { line: "sales", callback: false } });
    expect(sent.analysis?.status === "done" && sent.analysis.summary).toMatch(/Sales line/);
    expect(bridge.transcripts.get(r.callSid)?.analysis?.status).toBe("done");
    expect(existsSync(join(f.dir, "recordings", `${r.callSid}.wav`))).toBe(true);
    salesPitch = medianF0(r.agentAudio, 8000);
    expect(salesPitch).toBeGreaterThan(60);
  }, 60_000);

  it("routes +15550002 to support: the webhook's variable in its greeting, another voice", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550002",
      hangUpAfterMs: 1000,
      maxSeconds: 10,
    });
    expect(record(r).agent).toBe("support");
    expect(greeting(r)).toMatchObject({ generated: "Support line for gold customers." });
    const hook = f.server.to("/hook").at(-1)!;
    expect(f.signatureValid(hook)).toBe(true);
    expect(JSON.parse(hook.body.toString())).toMatchObject({
      callId: r.callSid,
      transport: "twilio",
      to: "+15550002",
      agent: "support",
    });
    // The female voice is well above the male one.
    // This agent's calls are not recorded.
    expect(existsSync(join(f.dir, "recordings", `${r.callSid}.wav`))).toBe(false);
    const pitch = medianF0(r.agentAudio, 8000);
    expect(pitch).toBeGreaterThan(salesPitch * 1.3);
  }, 60_000);

  it("records a failed analysis as failed, and the report still goes; /metrics counts agents and analyses", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550003",
      hangUpAfterMs: 500,
      maxSeconds: 5,
    });
    expect(record(r).agent).toBe("broken");
    const sent = await until(() => report(r.callSid), "the call's report");
    expect(sent.analysis).toMatchObject({ status: "failed" });
    expect(sent.analysis?.status === "failed" && sent.analysis.error).toMatch(/svc-no-such-model|model/);
    const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
    expect(metrics).toMatch(/voice_bridge_agent_calls_total\{agent="sales"\} [1-9]/);
    expect(metrics).toMatch(/voice_bridge_agent_calls_total\{agent="support"\} [1-9]/);
    expect(metrics).toMatch(/voice_bridge_call_analyses_total\{status="done"\} [1-9]/);
    expect(metrics).toMatch(/voice_bridge_call_analyses_total\{status="failed"\} [1-9]/);
  }, 60_000);

  it("answers <Reject/> when the webhook rejects the caller, and no call is recorded", async () => {
    const callSid = `CA${"7".repeat(32)}`;
    await expect(
      simulateCall({
        url: bridge.url,
        bridgeToken: bridge.token,
        callSid,
        from: REJECTED_CALLER,
        to: "+15550002",
        maxSeconds: 5,
      }),
    ).rejects.toBeInstanceOf(CallRejectedError);
    expect(bridge.transcripts.get(callSid)).toBeUndefined();
  });

  it("reloads during a live call: the live call keeps its agent, the next gets the new one", async () => {
    const live = simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550001",
      hangUpAfterMs: 3000,
      maxSeconds: 10,
    });
    // The live call has started (its record exists) before the configuration changes.
    await until(() => bridge.activeCalls > 0, "the live call");
    const agents = f.tree.agents as Record<string, Record<string, unknown>>;
    f.write({
      ...f.tree,
      agents: { ...agents, sales: { ...agents.sales, greeting: "New sales greeting." } },
    });
    // Closed by default: a reload needs the bridge's token, even from this machine.
    expect((await fetch(`${bridge.url}/admin/reload`, { method: "POST" })).status).toBe(401);
    const res = await bridgeFetch(bridge, "/admin/reload", { method: "POST" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, agents: ["default", "sales", "support", "broken"] });
    const old = await live;
    expect(greeting(old)).toMatchObject({ generated: "Sales line. Hello +15005550006, account ." });
    const next = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550001",
      hangUpAfterMs: 500,
      maxSeconds: 6,
    });
    expect(greeting(next)).toMatchObject({ generated: "New sales greeting." });

    // A broken configuration is refused with its errors; the running one stays.
    f.write({ ...f.tree, agnets: {} });
    const refused = await bridgeFetch(bridge, "/admin/reload", { method: "POST" });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: string }).error).toMatch(
      /agnets: unknown key "agnets" \(did you mean "agents"\?\)/,
    );
    const still = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      to: "+15550001",
      hangUpAfterMs: 500,
      maxSeconds: 6,
    });
    expect(greeting(still)).toMatchObject({ generated: "New sales greeting." });
  }, 90_000);
});
