// Which engine keeps the call records: PostgreSQL when DATABASE_URL is set, otherwise SQLite in
// the data dir. Migrations are applied as the store opens; older .jsonl records are imported once.
import { mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import type { CallStore } from "./call-store.ts";
import { importJsonlOnce } from "./import-jsonl.ts";
import { SQLITE_FILE, SqliteCallStore } from "./sqlite/store.ts";

/** The name of this bridge in the records (several bridges on one database). */
export function instanceName(config: Config): string {
  return config.store.instance ?? hostname();
}

export async function openCallStore(config: Config, log: Logger): Promise<CallStore> {
  const storeLog = log.child({ component: "store" });
  const instance = instanceName(config);
  const onWriteError = (err: Error, callIds: string[]) =>
    storeLog.error({ err, callIds }, "call records: write failed (the live calls' records stay in memory)");
  await mkdir(config.local.dataDir, { recursive: true });
  const path = join(config.local.dataDir, SQLITE_FILE);
  const store = await SqliteCallStore.open({ path, instance, onWriteError });
  storeLog.info({ path, instance, migrationsApplied: store.migrations }, "call records: SQLite");
  if (store.lost.length)
    storeLog.warn(
      { calls: store.lost.length, callIds: store.lost.slice(0, 20) },
      "call records: calls left live by this bridge's last run (it died) are ended as `instance lost`",
    );
  await importJsonlOnce(store, config.agent.transcriptDir ?? join(config.local.dataDir, "calls"), storeLog);
  return store;
}
