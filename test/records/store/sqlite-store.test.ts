import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { MIGRATIONS_TABLE, migrationsOf } from "../../../src/records/store/migrations.ts";
import { SqliteCallStore } from "../../../src/records/store/sqlite/store.ts";
import { callEvents } from "../../session/call-events.ts";
import { EARLIER_AT, EARLIER_CALLS, expectEarlierCallsRead, storeContract } from "./store-contract.ts";

const root = mkdtempSync(join(tmpdir(), "vb-sqlite-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const open = (instance = "bridge-test", path = join(root, `db-${n++}.db`)) =>
  SqliteCallStore.open({
    path,
    instance,
    onWriteError: (err) => {
      throw err;
    },
  });

describe("SQLite call store", () => {
  storeContract({ open: (instance) => open(instance) });

  it("applies its migrations once, in WAL mode, and keeps what was written across a reopen", async () => {
    const path = join(root, "reopen.db");
    const first = await open("a", path);
    expect(first.migrations).toEqual(["1_calls", "2_outbound", "3_shutdown_outcome"]);
    first.append("CA-1", {
      type: "call-start",
      at: "2026-03-01T09:00:00.000Z",
      callId: "CA-1",
      transport: "sip",
    });
    await first.close();
    const again = await open("a", path);
    expect(again.migrations).toEqual([]);
    expect((await again.get("CA-1"))?.transport).toBe("sip");
    await again.close();
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.prepare("SELECT version, name FROM schema_migrations").all()).toEqual([
      { version: 1, name: "calls" },
      { version: 2, name: "outbound" },
      { version: 3, name: "shutdown_outcome" },
    ]);
    db.close();
  });

  it("reads the calls of earlier versions with their outcome, the shutdown's no longer a hang-up", async () => {
    // A database as those versions left it: the outcome read from the reason into its column, the
    // call-end events with no outcome of their own.
    const path = join(root, "earlier.db");
    const db = new DatabaseSync(path);
    db.exec(MIGRATIONS_TABLE);
    for (const m of migrationsOf("sqlite").slice(0, 2)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations VALUES (?, ?, ?)").run(m.version, m.name, "2026-01-01");
    }
    for (const { callId, reason, outcome, events } of EARLIER_CALLS) {
      db.prepare(
        "INSERT INTO calls (call_id, instance, transport, started_at, ended_at, end_reason, outcome, duration_ms) VALUES (?, 'old', 'sip', ?, ?, ?, ?, 1000)",
      ).run(callId, EARLIER_AT, EARLIER_AT, reason, outcome);
      for (const [seq, e] of events.entries())
        db.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?)").run(
          callId,
          seq,
          e.type,
          EARLIER_AT,
          JSON.stringify(e),
        );
    }
    db.close();

    const store = await open("new", path);
    expect(store.migrations).toEqual(["3_shutdown_outcome"]);
    await expectEarlierCallsRead(store);
    await store.close();
  });

  it("loses at most the turn in flight when the bridge is killed", async () => {
    const path = join(root, "crash.db");
    const child = spawnSync(
      process.execPath,
      [new URL("./crash-child.ts", import.meta.url).pathname, path, "100"],
      {
        encoding: "utf8",
      },
    );
    expect(child.signal).toBe("SIGKILL");
    const store = await open("doomed", path);
    const events = callEvents("CA-crash", 3);
    // Everything appended before the last few milliseconds is there, whole; the event appended
    // as the process died may or may not be.
    const kept = (await store.get("CA-crash"))?.events ?? [];
    expect(kept.slice(0, events.length - 2)).toEqual(events.slice(0, -2));
    // Left live by the dead run, the call is ended by the next start of the same instance.
    expect(store.lost).toEqual(["CA-crash"]);
    expect(kept.at(-1)).toMatchObject({ type: "call-end", reason: "instance lost" });
    expect(kept.length).toBeLessThanOrEqual(events.length);
    expect((await store.list({ limit: 1 })).calls[0]).toMatchObject({
      outcome: "instance_lost",
      endReason: "instance lost",
    });
    await store.close();
  });
});
