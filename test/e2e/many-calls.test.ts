// Right at any load: 400 AudioSocket calls at once through the real bridge (twice the number of
// ended calls it keeps in memory), each greeted, then all hung up. Every call's record is served
// by GET /calls/:id and GET /calls lists them all; a report receiver gets 400 reports. Before
// live calls were kept whole, calls past 200 lost their record and their report.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallReport } from "../../src/records/reports/report.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { until } from "../helpers/until.ts";
import { Receiver } from "../records/reports/receiver.ts";
import { scripted, scriptedBridgeEnv } from "./scripted-services.ts";

const SECRET = "e2e-report-secret-0123456789";
const CALLS = 400;
const dir = mkdtempSync(join(tmpdir(), "vb-e2e-many-"));
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

describe("400 calls at once", () => {
  it("keeps every record and sends every report", { timeout: 120_000 }, async () => {
    const receiver = new Receiver(SECRET);
    await receiver.listen();
    cleanups.push(() => receiver.close());
    const config = loadConfig({
      env: {
        ...scriptedBridgeEnv(join(dir, "data")),
        CALL_REPORT_URL: receiver.url,
        CALL_REPORT_SECRET: SECRET,
      },
    });
    const bridge: Bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }), {
      wrapServices: scripted,
    });
    cleanups.push(() => bridge.close(0));

    const ids = Array.from(
      { length: CALLS },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    );
    const clients: AsteriskClient[] = [];
    for (const id of ids) {
      const client = await AsteriskClient.connect(bridge.audioSocket!.port);
      cleanups.push(() => client.close());
      client.send(uuidFrame(id));
      clients.push(client);
    }
    // All 400 live at once, each greeted, before any ends.
    const greeted = (id: string) =>
      bridge.transcripts.get(id)?.turns.some((t) => t.role === "assistant") ?? false;
    await until(() => ids.every(greeted), "every call greeted", 60_000);
    expect(bridge.transcripts.liveCalls).toHaveLength(CALLS);
    for (const client of clients) client.send(frame(0x00));
    await until(() => receiver.received.length >= CALLS, "400 reports", 60_000);

    const reported = receiver.received.map((r) => (JSON.parse(r.body.toString()) as CallReport).callId);
    expect(new Set(reported)).toEqual(new Set(ids));
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    for (const id of ids) {
      const res = await bridgeFetch(bridge, `/calls/${id}`);
      expect(res.status, id).toBe(200);
      expect(((await res.json()) as { endReason?: string }).endReason).toBe("hang-up from Asterisk");
    }
    const listed = new Set<string>();
    let cursor: string | null = null;
    do {
      const res = await bridgeFetch(bridge, `/calls?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      const page = (await res.json()) as { calls: { callId: string }[]; next_cursor: string | null };
      for (const c of page.calls) listed.add(c.callId);
      cursor = page.next_cursor;
    } while (cursor);
    expect(listed).toEqual(new Set(ids));
  });
});
