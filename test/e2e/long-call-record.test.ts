// A long call's record through the real bridge, on SQLite and on a real PostgreSQL the test starts:
// an AudioSocket call over TCP whose record gets many more turns than memory keeps (added to the
// live record as the session adds its own, a fast synthetic loop instead of an hour of speech).
// Memory holds only the call's latest events; GET /calls/:id over HTTP while the call lives, and
// the end-of-call report POSTed to a real receiver after it ends, still hold every turn.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { Postgres } from "../../bench/lib/postgres-server.ts";
import { loadConfig } from "../../src/config/config.ts";
import { type CallEvent, type CallRecord, LIVE_TAIL } from "../../src/records/call-record.ts";
import type { CallReport } from "../../src/records/reports/report.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { until } from "../helpers/until.ts";
import { Receiver } from "../records/reports/receiver.ts";
import { GREETING, scripted, scriptedBridgeEnv } from "./scripted-services.ts";

const SECRET = "e2e-long-call-secret-0123456789";
const TURNS = 3 * LIVE_TAIL;
const dir = mkdtempSync(join(tmpdir(), "vb-e2e-long-call-"));
const cleanups: (() => unknown)[] = [];
let postgres: Postgres | undefined;
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await postgres?.close();
  rmSync(dir, { recursive: true, force: true });
});

const engines: Record<string, () => Promise<Record<string, string>>> = {
  sqlite: async () => ({}),
  postgres: async () => {
    postgres ??= await Postgres.start();
    return { DATABASE_URL: await postgres.database("long_call") };
  },
};

const turn = (i: number): CallEvent[] => {
  const at = new Date().toISOString();
  return [
    { type: "user", at, text: `question ${i}`, source: "speech" },
    {
      type: "assistant",
      at,
      generated: `answer ${i}`,
      heard: `answer ${i}`,
      interrupted: false,
      toolCalls: [],
      metrics: {},
    },
  ];
};

describe.each(Object.keys(engines))("a long call's record on %s", (engine) => {
  it("keeps its latest events in memory and every turn in GET /calls/:id and the report", {
    timeout: 90_000,
  }, async () => {
    const receiver = await new Receiver(SECRET).listen();
    cleanups.push(() => receiver.close());
    const config = loadConfig({
      env: {
        ...scriptedBridgeEnv(join(dir, engine)),
        ...(await engines[engine]!()),
        CALL_REPORT_URL: receiver.url,
        CALL_REPORT_SECRET: SECRET,
      },
    });
    const bridge: Bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }), {
      wrapServices: scripted,
    });
    cleanups.push(() => bridge.close(0));

    const uuid =
      engine === "sqlite" ? "44444444-4444-4444-8444-444444444444" : "55555555-5555-4555-8555-555555555555";
    const client = await AsteriskClient.connect(bridge.audioSocket!.port);
    cleanups.push(() => client.close());
    client.send(uuidFrame(uuid));
    const greeted = () => bridge.transcripts.recent(uuid).some((e) => e.type === "assistant");
    await until(greeted, "the greeting to be played");

    // Turn after turn on the live record (far faster than speech), the call loop going on between.
    for (let i = 0; i < TURNS; i++) {
      for (const e of turn(i)) bridge.transcripts.append(uuid, e);
      await new Promise((r) => setTimeout(r, 1));
    }
    // Once the store has caught up, memory holds the call-start and at most 1.5 × LIVE_TAIL events.
    await until(() => bridge.transcripts.held(uuid) <= LIVE_TAIL * 1.5 + 1, "memory to let go");
    expect(bridge.transcripts.get(uuid)).toBeUndefined();

    const said = (r: CallRecord | CallReport) => r.turns.filter((t) => /^(question|answer) /.test(t.text));
    const expected = Array.from({ length: TURNS }, (_, i) => [`question ${i}`, `answer ${i}`]).flat();
    const live = await bridgeFetch(bridge, `/calls/${uuid}`);
    expect(live.status).toBe(200);
    const record = (await live.json()) as CallRecord;
    expect(record.turns[0]).toMatchObject({ role: "assistant", heard: GREETING });
    expect(said(record).map((t) => t.text)).toEqual(expected);
    expect(record.endedAt).toBeUndefined();

    // Asterisk hangs up: the report is made from the whole record.
    const delivered = receiver.next();
    client.send(frame(0x00));
    const report = JSON.parse((await delivered).body.toString()) as CallReport;
    expect(report.callId).toBe(uuid);
    expect(report.turns[0]).toMatchObject({ role: "assistant", heard: GREETING });
    expect(said(report).map((t) => t.text)).toEqual(expected);
    expect(report.endReason).toBe("hang-up from Asterisk");
    const ended = (await (await bridgeFetch(bridge, `/calls/${uuid}`)).json()) as CallRecord;
    expect(ended.events).toEqual(report.events);
  });
});
