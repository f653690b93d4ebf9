// The metadata database of the local service: one SQLite file in the data dir (node:sqlite),
// WAL journal with full fsync, so a row the service acknowledged survives a crash or restart.
// Stores create their own tables with `CREATE TABLE IF NOT EXISTS` when they open.

import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";

export const DB_FILE = "service.sqlite";

export type Database = DatabaseSync;

export function openDatabase(dataDir: string): Database {
  const db = new DatabaseSync(join(dataDir, DB_FILE));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;");
  return db;
}
