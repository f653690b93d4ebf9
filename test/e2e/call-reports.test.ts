// End-of-call reports and GET /calls through the real bridge: AudioSocket calls over TCP, the
// report POSTed over HTTP to a real receiver on 127.0.0.1 that checks the signature, GET /calls
// over HTTP. The speech services are scripted (no local service: only the bridge is under test).
// The receiver is down for the first call; that bridge is stopped with the report undelivered,
// and a second bridge on the same data directory delivers it at start.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallReport } from "../../src/records/reports/report.ts";
import type { CallSummary } from "../../src/records/store/call-store.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";
import { Attempts } from "../records/reports/attempts.ts";
import { Receiver } from "../records/reports/receiver.ts";
import { GREETING, scriptedBridgeEnv, startScriptedBridge } from "./scripted-services.ts";

const SECRET = "e2e-report-secret-0123456789";
const dir = mkdtempSync(join(tmpdir(), "vb-e2e-reports-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

async function bridgeReportingTo(url: string, attempts: Attempts): Promise<Bridge> {
  const bridge = await startScriptedBridge(
    {
      ...scriptedBridgeEnv(join(dir, "data")),
      AGENT_RECORDING_DIR: join(dir, "recordings"),
      CALL_REPORT_URL: url,
      CALL_REPORT_SECRET: SECRET,
    },
    { onReportAttempt: attempts.push },
  );
  cleanups.push(() => bridge.close(0));
  return bridge;
}

/** One AudioSocket call: the agent's greeting is played, then Asterisk hangs up. */
async function call(bridge: Bridge, uuid: string): Promise<void> {
  const client = await AsteriskClient.connect(bridge.audioSocket!.port);
  cleanups.push(() => client.close());
  client.send(uuidFrame(uuid));
  const greeted = () => bridge.transcripts.get(uuid)?.turns.some((t) => t.role === "assistant") ?? false;
  await until(greeted, "the greeting to be played");
  client.send(frame(0x00));
}

async function getJson(
  bridge: Bridge,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await bridgeFetch(bridge, path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const spool = () => readdirSync(join(dir, "data", "call-reports")).filter((n) => n.endsWith(".json"));
const uuids = [
  "11111111-1111-4111-8111-111111111111",
  "22222222-2222-4222-8222-222222222222",
  "33333333-3333-4333-8333-333333333333",
];

describe("end-of-call reports through the bridge", () => {
  it("survive a receiver outage and a restart; GET /calls pages through the calls of both runs", {
    timeout: 60_000,
  }, async () => {
    const receiver = new Receiver(SECRET, await freePort());
    cleanups.push(() => receiver.close());

    // First run: the receiver is down when the call ends.
    const firstAttempts = new Attempts();
    const first = await bridgeReportingTo(receiver.url, firstAttempts);
    await call(first, uuids[0]!);
    expect(await firstAttempts.next()).toMatchObject({ kind: "retry", attempt: 1, error: "ECONNREFUSED" });
    await first.close(0);
    expect(spool()).toHaveLength(1);

    // The receiver comes up; a new bridge on the same data directory sends what was left.
    await receiver.listen();
    const attempts = new Attempts();
    const second = await bridgeReportingTo(receiver.url, attempts);
    expect(await attempts.next()).toMatchObject({ kind: "delivered", attempt: 1, status: 200 });
    expect(spool()).toEqual([]);
    expect(receiver.received).toHaveLength(1);
    const delivered = receiver.received[0]!;
    expect(delivered.verified).toBe(true);
    const report = JSON.parse(delivered.body.toString()) as CallReport;
    expect(delivered.headers["x-voice-bridge-report-id"]).toBe(report.reportId);

    // The body: the call's record as GET /calls/:id gives it, plus how and when it ended.
    const record = await getJson(second, `/calls/${uuids[0]}`);
    expect(record.status).toBe(200);
    // (The record says where the recording is as the store keeps it; the report as a path.)
    const { reportId, outcome, durationMs, recordingPath, ...rest } = report;
    const { recording, ...recordBody } = record.body;
    expect(rest).toEqual(recordBody);
    expect(recording).toEqual({ instance: report.instance, path: recordingPath });
    expect(report).toMatchObject({
      callId: uuids[0],
      transport: "audiosocket",
      endReason: "hang-up from Asterisk",
      outcome: "caller_hangup",
    });
    expect(durationMs).toBeGreaterThan(0);
    expect(report.instance).toBeTruthy();
    expect(report.turns[0]).toMatchObject({ role: "assistant", generated: GREETING, heard: GREETING });
    expect(recordingPath).toMatch(new RegExp(`/recordings/${uuids[0]}\\.wav$`));
    expect(existsSync(recordingPath!)).toBe(true);

    // Two calls with the receiver up: each reported as it ends.
    for (const uuid of uuids.slice(1)) {
      await call(second, uuid);
      expect(await attempts.next()).toMatchObject({ kind: "delivered", attempt: 1 });
    }
    const reported = receiver.received.map((r) => (JSON.parse(r.body.toString()) as CallReport).callId);
    expect(reported).toEqual(uuids);

    // GET /calls: newest first, two a page, the first run's call included.
    const page1 = await getJson(second, `/calls?limit=2`);
    expect(page1.status).toBe(200);
    const calls1 = page1.body.calls as CallSummary[];
    expect(calls1.map((c) => c.callId)).toEqual([uuids[2], uuids[1]]);
    expect(calls1[0]).toMatchObject({ transport: "audiosocket", outcome: "caller_hangup", turns: 1 });
    expect(Date.parse(calls1[0]!.endedAt!)).toBeGreaterThanOrEqual(Date.parse(calls1[0]!.startedAt));
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await getJson(second, `/calls?limit=2&cursor=${page1.body.next_cursor}`);
    expect((page2.body.calls as CallSummary[]).map((c) => c.callId)).toEqual([uuids[0]]);
    expect(page2.body.next_cursor).toBeNull();
    const all = await getJson(second, `/calls`);
    expect((all.body.calls as CallSummary[]).map((c) => c.callId)).toEqual([...uuids].reverse());

    for (const [query, message] of [
      ["limit=0", /^limit: expected a whole number from 1 to 100/],
      ["limit=101", /^limit: /],
      ["limit=ten", /^limit: /],
      ["cursor=not-a-cursor", /^cursor: not a cursor from a GET \/calls page/],
      ["transport=fax", /^transport: expected one of twilio, sip, audiosocket, discord, browser, got "fax"/],
      ["outcome=happy", /^outcome: expected one of agent_hangup, .*live, got "happy"/],
      ["since=yesterday", /^since: expected an ISO 8601 date/],
      ["since=2026-03-02&until=2026-03-01", /^until: must be after since/],
      ["q=%20!!", /^q: expected words/],
      ["form=%2B15550001", /^form: not a filter of GET \/calls/],
    ] as const) {
      const bad = await getJson(second, `/calls?${query}`);
      expect(bad.status).toBe(400);
      expect((bad.body.error as { message: string }).message).toMatch(message);
    }

    // Each report reached the receiver once, and nothing is left to send.
    await second.close(0);
    expect(receiver.received).toHaveLength(3);
    expect(spool()).toEqual([]);
  });
});
