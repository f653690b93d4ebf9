// Which engine keeps the call records: PostgreSQL when DATABASE_URL is set, otherwise SQLite in
// the data dir. Migrations are applied as the store opens; older .jsonl records are imported once.
import { mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Config } from "../../config/config.ts";
import type { Logger } from "../../core/log.ts";
import type { CallStore } from "./call-store.ts";
import { importJsonlOnce } from "./import-jsonl.ts";
import { PostgresCallStore } from "./postgres/store.ts";
import { SQLITE_FILE, SqliteCallStore } from "./sqlite/store.ts";

/** The name of this bridge in the records (several bridges on one database). */
export function instanceName(config: Config): string {
  return config.store.instance ?? hostname();
}

export async function openCallStore(config: Config, log: Logger): Promise<CallStore> {
  const storeLog = log.child({ component: "store" });
  const instance = instanceName(config);
  const store = config.store.databaseUrl
    ? await PostgresCallStore.open({
        url: config.store.databaseUrl,
        instance,
        log: storeLog,
        lostAfterMs: config.store.lostAfterSeconds * 1000,
        heartbeatMs: (config.store.lostAfterSeconds * 1000) / 6,
      })
    : await openSqlite(config, instance, storeLog);
  const oldRecords = config.agent.transcriptDir ?? join(config.local.dataDir, "calls");
  await importJsonlOnce(store, oldRecords, storeLog).catch((err: Error) =>
    storeLog.error(
      { err, dir: oldRecords },
      "call records: could not import the .jsonl records now; trying again at the next start",
    ),
  );
  return store;
}

async function openSqlite(config: Config, instance: string, log: Logger): Promise<CallStore> {
  await mkdir(config.local.dataDir, { recursive: true });
  const path = join(config.local.dataDir, SQLITE_FILE);
  const onWriteError = (err: Error, callIds: string[]) =>
    log.error({ err, callIds }, "call records: write failed (the live calls' records stay in memory)");
  const store = await SqliteCallStore.open({ path, instance, onWriteError });
  log.info(
    { path, instance, migrationsApplied: store.migrations },
    "call records: SQLite (DATABASE_URL=postgres://… shares them between bridges)",
  );
  if (store.lost.length)
    log.warn(
      { calls: store.lost.length, callIds: store.lost.slice(0, 20) },
      "call records: calls left live by this bridge's last run (it died) are ended as `instance lost`",
    );
  return store;
}
