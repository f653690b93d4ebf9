// Schema migrations, versioned in the repository: migrations/<engine>/NNNN_name.sql, applied in
// order at start, each once (the schema_migrations table says which are in). A new column or
// table is a new file; a file already released is never edited.
import { readdirSync, readFileSync } from "node:fs";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations of an engine, oldest first (read at start, before any call). */
export function migrationsOf(engine: "sqlite" | "postgres"): Migration[] {
  const dir = new URL(`./migrations/${engine}/`, import.meta.url);
  return readdirSync(dir)
    .flatMap((file) => {
      const m = /^(\d{4})_([\w-]+)\.sql$/.exec(file);
      return m ? [{ version: Number(m[1]), name: m[2]!, sql: readFileSync(new URL(file, dir), "utf8") }] : [];
    })
    .sort((a, b) => a.version - b.version);
}

export const MIGRATIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)";
