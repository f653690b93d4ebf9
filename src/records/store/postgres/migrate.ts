// Applies PostgreSQL migrations at start, under an advisory lock so that bridges starting
// together on one database apply each migration once.
import type pg from "pg";
import { MIGRATIONS_TABLE, migrationsOf } from "../migrations.ts";

/** An arbitrary key, the same in every bridge: "voice-bridge migrations". */
const LOCK = 72_620_028;

/** Applies what is missing; returns the names applied. */
export async function migrate(pool: pg.Pool): Promise<string[]> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK]);
    try {
      await client.query(MIGRATIONS_TABLE);
      const done = new Set(
        (await client.query<{ version: number }>("SELECT version FROM schema_migrations")).rows.map(
          (r) => r.version,
        ),
      );
      const applied: string[] = [];
      for (const m of migrationsOf("postgres")) {
        if (done.has(m.version)) continue;
        await client.query("BEGIN");
        try {
          await client.query(m.sql);
          await client.query(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
            [m.version, m.name, new Date().toISOString()],
          );
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {});
          throw Object.assign(new Error(`migration ${m.version}_${m.name}: ${(err as Error).message}`), {
            code: (err as { code?: string }).code,
          });
        }
        applied.push(`${m.version}_${m.name}`);
      }
      return applied;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [LOCK]).catch(() => {});
    }
  } finally {
    client.release();
  }
}
