// The campaign store's reach into its database: queries with `?` placeholders and transactions,
// the same on SQLite (a worker thread owns the connection) and PostgreSQL (a pool). The store's
// logic is written once over this; only row locking differs (`FOR UPDATE SKIP LOCKED` on PostgreSQL,
// where several bridges share the rows; SQLite has one writer and serves one bridge).
import { readdir, readFile } from "node:fs/promises";
import type { DialingArgs, DialingOp, DialingResult } from "./store-dialing.ts";

export type SqlRow = Record<string, unknown>;
export type SqlValue = string | number | null;

/** One statement and its values. */
export interface Stmt {
  readonly sql: string;
  readonly params?: readonly SqlValue[];
}

export interface Sql {
  all(sql: string, params?: readonly SqlValue[]): Promise<SqlRow[]>;
  /**
   * Statements run in order, each one's rows (SQLite: in one message to its thread; PostgreSQL: one
   * round trip); one failing stops the rest. In a transaction, `commit` ends it with them.
   */
  batch(stmts: readonly Stmt[], o?: { commit?: boolean }): Promise<SqlRow[][]>;
}

export interface SqlEngine extends Sql {
  readonly engine: "sqlite" | "postgres";
  /** Row locks (PostgreSQL): `FOR UPDATE` suffixes mean something. */
  readonly locks: boolean;
  /** Runs `work` in one transaction: all of it is written, or none. */
  tx<T>(work: (q: Sql) => Promise<T>): Promise<T>;
  /**
   * Runs a dialling operation (store-dialing.ts) where the database is, when that saves the
   * event loop a round trip per statement: SQLite runs it on its thread, one message each way.
   */
  near?<K extends DialingOp>(op: K, ...args: DialingArgs<K>): Promise<DialingResult<K>>;
  close(): Promise<void>;
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The campaign tables' migrations of an engine, oldest first (migrations/<engine>/NNNN_name.sql). */
export async function campaignMigrations(engine: "sqlite" | "postgres"): Promise<Migration[]> {
  const dir = new URL(`./migrations/${engine}/`, import.meta.url);
  const out: Migration[] = [];
  for (const file of await readdir(dir)) {
    const m = /^(\d{4})_([\w-]+)\.sql$/.exec(file);
    if (m) out.push({ version: Number(m[1]), name: m[2]!, sql: await readFile(new URL(file, dir), "utf8") });
  }
  return out.sort((a, b) => a.version - b.version);
}

/** Their own table, so that the call records' migrations and these number independently. */
export const CAMPAIGN_MIGRATIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS campaign_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)";

/** `?, ?, ?` for n values. */
export function marks(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
