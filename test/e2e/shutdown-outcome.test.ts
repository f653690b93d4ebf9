// A call the bridge itself ends when it stops (the drain time over, as on SIGTERM) is counted,
// filed and reported as ended by the shutdown, not as the caller hanging up: through the real
// bridge, an AudioSocket call over TCP whose caller stays on, scripted speech services, the report
// to a real receiver, and GET /calls of a second bridge on the same data directory.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import type { CallReport } from "../../src/records/reports/report.ts";
import type { CallSummary } from "../../src/records/store/call-store.ts";
import { AsteriskClient, uuidFrame } from "../bridges/audiosocket/client.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { until } from "../helpers/until.ts";
import { Attempts } from "../records/reports/attempts.ts";
import { Receiver } from "../records/reports/receiver.ts";
import { scriptedBridgeEnv, startScriptedBridge } from "./scripted-services.ts";

const SECRET = "e2e-shutdown-secret-0123456789";
const UUID = "44444444-4444-4444-8444-444444444444";
const dir = mkdtempSync(join(tmpdir(), "vb-e2e-shutdown-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

async function bridgeReportingTo(url: string, attempts: Attempts): Promise<Bridge> {
  const bridge = await startScriptedBridge(
    { ...scriptedBridgeEnv(join(dir, "data")), CALL_REPORT_URL: url, CALL_REPORT_SECRET: SECRET },
    { onReportAttempt: attempts.push },
  );
  cleanups.push(() => bridge.close(0));
  return bridge;
}

async function json<T>(bridge: Bridge, path: string): Promise<T> {
  const res = await bridgeFetch(bridge, path);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
}

describe("a call the bridge ends at shutdown", () => {
  it("is counted, filed and reported with the outcome bridge_shutdown", { timeout: 60_000 }, async () => {
    const receiver = await new Receiver(SECRET).listen();
    cleanups.push(() => receiver.close());
    const first = await bridgeReportingTo(receiver.url, new Attempts());

    // A caller who stays on: the call is live when the drain time is over.
    const client = await AsteriskClient.connect(first.audioSocket!.port);
    cleanups.push(() => client.close());
    client.send(uuidFrame(UUID));
    const greeted = () => first.transcripts.get(UUID)?.turns.some((t) => t.role === "assistant") ?? false;
    await until(greeted, "the greeting to be played");
    await first.close(300);

    const counted = await first.metrics.registry.getSingleMetricAsString("voice_bridge_calls_total");
    expect(counted).toContain(
      'voice_bridge_calls_total{transport="audiosocket",outcome="bridge_shutdown"} 1',
    );
    expect(counted).not.toContain('outcome="caller_hangup"');

    // The next bridge on the same data directory: the call as filed, and its report (sent by the
    // first bridge as it stopped, or spooled then and sent at this start).
    const second = await bridgeReportingTo(receiver.url, new Attempts());
    await until(() => receiver.received.length > 0, "the call's report");
    const report = JSON.parse(receiver.received[0]!.body.toString()) as CallReport;
    expect(report).toMatchObject({ callId: UUID, outcome: "bridge_shutdown", endReason: "bridge shut down" });

    const ended = await json<{ calls: CallSummary[] }>(second, "/calls?outcome=bridge_shutdown");
    expect(ended.calls.map((c) => [c.callId, c.outcome, c.endReason])).toEqual([
      [UUID, "bridge_shutdown", "bridge shut down"],
    ]);
    expect((await json<{ calls: CallSummary[] }>(second, "/calls?outcome=caller_hangup")).calls).toEqual([]);
    const record = await json<CallRecord>(second, `/calls/${UUID}`);
    expect(record.events.at(-1)).toMatchObject({
      type: "call-end",
      outcome: "bridge_shutdown",
      reason: "bridge shut down",
    });
  });
});
