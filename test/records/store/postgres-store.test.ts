import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Postgres } from "../../../bench/lib/postgres-server.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { CallEvent } from "../../../src/records/call-record.ts";
import { MIGRATIONS_TABLE, migrationsOf } from "../../../src/records/store/migrations.ts";
import { PostgresCallStore } from "../../../src/records/store/postgres/store.ts";
import { until } from "../../helpers/until.ts";
import { EARLIER_AT, EARLIER_CALLS, expectEarlierCallsRead, storeContract } from "./store-contract.ts";

let server: Postgres;
beforeAll(async () => {
  server = await Postgres.start();
}, 60_000);
afterAll(() => server?.close());

let n = 0;
const open = async (url: string, instance = "bridge-test") =>
  PostgresCallStore.open({ url, instance, log: silentLogger });

describe("PostgreSQL call store", () => {
  storeContract({ open: async (instance) => open(await server.database(`calls_${n++}`), instance) });

  it("applies the migrations in the repository once, even with two bridges starting together", async () => {
    const url = await server.database("migrations");
    const both = await Promise.all([open(url, "a"), open(url, "b")]);
    for (const store of both) await store.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT version, name FROM schema_migrations ORDER BY version");
      expect(rows).toEqual([
        { version: 1, name: "calls" },
        { version: 2, name: "call_words" },
        { version: 3, name: "outbound" },
        { version: 4, name: "shutdown_outcome" },
      ]);
    } finally {
      await client.end();
    }
  });

  it("reads the calls of earlier versions with their outcome, the shutdown's no longer a hang-up", async () => {
    // A database as those versions left it: the outcome read from the reason into its column, the
    // call-end events with no outcome of their own.
    const url = await server.database("earlier");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(MIGRATIONS_TABLE);
      for (const m of migrationsOf("postgres").slice(0, 3)) {
        await client.query(m.sql);
        await client.query("INSERT INTO schema_migrations VALUES ($1, $2, $3)", [
          m.version,
          m.name,
          EARLIER_AT,
        ]);
      }
      for (const { callId, reason, outcome, events } of EARLIER_CALLS) {
        await client.query(
          "INSERT INTO calls (call_id, instance, transport, started_at, ended_at, end_reason, outcome, duration_ms) VALUES ($1, 'old', 'sip', $2, $2, $3, $4, 1000)",
          [callId, EARLIER_AT, reason, outcome],
        );
        for (const [seq, e] of events.entries())
          await client.query("INSERT INTO events VALUES ($1, $2, $3, $4, $5)", [
            callId,
            seq,
            e.type,
            EARLIER_AT,
            e,
          ]);
      }
    } finally {
      await client.end();
    }

    const store = await open(url, "new");
    try {
      await expectEarlierCallsRead(store);
    } finally {
      await store.close();
    }
  });

  it("does not end another bridge's live call because the database was down for them both", async () => {
    // Both bridges' beats are old once the database is back; the live bridge beats again within a
    // beat, and the other one must not have judged it before then.
    const url = await server.database("outage");
    const opts = { url, log: silentLogger, lostAfterMs: 600 };
    const a = await PostgresCallStore.open({ ...opts, instance: "a", heartbeatMs: 100 });
    const b = await PostgresCallStore.open({ ...opts, instance: "b", heartbeatMs: 20 });
    try {
      const start: CallEvent = {
        type: "call-start",
        at: new Date().toISOString(),
        callId: "CA-on",
        transport: "sip",
      };
      a.append("CA-on", start);
      await a.flush();
      const down = Date.now();
      await server.stop();
      await until(() => Date.now() - down > 2 * opts.lostAfterMs, "an outage longer than lostAfterMs");
      await server.start();
      const back = await until(
        () =>
          b.list({ limit: 1 }).then(
            () => Date.now(),
            () => undefined,
          ),
        "B to reach the database again",
      );
      // Long enough for B to judge A (its own touch regained, then a whole lostAfterMs of beats).
      await until(() => Date.now() - back > 3 * opts.lostAfterMs, "B's beats past lostAfterMs");
      expect((await b.list({ limit: 10 })).calls.map((c) => [c.callId, c.endReason])).toEqual([
        ["CA-on", undefined],
      ]);
      // A bridge that really went silent is still judged.
      await a.close();
      const record = await until(async () => {
        const r = await b.get("CA-on");
        return r?.endReason ? r : undefined;
      }, "A's call ended by B once A is silent");
      expect(record.endReason).toBe("instance lost");
    } finally {
      await b.close();
    }
  }, 30_000);
});
