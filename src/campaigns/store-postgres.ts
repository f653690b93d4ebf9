// PostgreSQL for campaigns shared by every bridge on the database: a pool of its own, a
// transaction per claim, rows locked `FOR UPDATE SKIP LOCKED` so that two bridges never take the
// same row. Migrations run under an advisory lock, once, whichever bridge starts first.
import pg from "pg";
import {
  CAMPAIGN_MIGRATIONS_TABLE,
  campaignMigrations,
  type Sql,
  type SqlEngine,
  type SqlRow,
  type SqlValue,
  type Stmt,
} from "./sql.ts";

/** "voice-bridge campaign migrations": the same key in every bridge. */
const LOCK = 72_620_057;

/** Texts already numbered: the store's statements are few, and asked for on every claim. */
const numberedTexts = new Map<string, string>();

/** `?` placeholders as PostgreSQL's `$n`. */
function numbered(sql: string): string {
  let out = numberedTexts.get(sql);
  if (out === undefined) {
    let n = 0;
    out = sql.replace(/\?/g, () => `$${++n}`);
    // Texts that vary (IN lists of any length) must not grow it without end.
    if (numberedTexts.size >= 256) numberedTexts.clear();
    numberedTexts.set(sql, out);
  }
  return out;
}

/**
 * Statements as one text with their values written in (pg's escapeLiteral for text): sent as one
 * query, they cost one round trip however many there are, where each parameterized query costs
 * its own (and on a VM each round trip's wake-ups cost more than the statement).
 */
function inlined(stmts: readonly Stmt[]): string {
  return stmts
    .map((s) => {
      let i = 0;
      return s.sql.replace(/\?/g, () => literal(s.params?.[i++]));
    })
    .join(";\n");
}

function literal(v: SqlValue | undefined): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
    return String(v);
  }
  return pg.escapeLiteral(v);
}

/** Each statement's rows, from one query of one or several statements. */
async function runBatch(client: pg.Pool | pg.PoolClient, stmts: readonly Stmt[]): Promise<SqlRow[][]> {
  if (stmts.length === 0) return [];
  const result = (await client.query(inlined(stmts))) as unknown as pg.QueryResult | pg.QueryResult[];
  return (Array.isArray(result) ? result : [result]).map((r) => r.rows as SqlRow[]);
}

export class PostgresCampaignEngine implements SqlEngine {
  readonly engine = "postgres";
  readonly locks = true;
  readonly #pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  static async open(url: string): Promise<PostgresCampaignEngine> {
    const pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5000 });
    // An idle client losing its connection: the next query reconnects (the scheduler retries its tick).
    pool.on("error", () => {});
    const engine = new PostgresCampaignEngine(pool);
    await engine.#migrate();
    return engine;
  }

  async #migrate(): Promise<void> {
    const client = await this.#pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1)", [LOCK]);
      try {
        await client.query(CAMPAIGN_MIGRATIONS_TABLE);
        const done = new Set(
          (await client.query<{ version: number }>("SELECT version FROM campaign_migrations")).rows.map(
            (r) => r.version,
          ),
        );
        for (const m of await campaignMigrations("postgres")) {
          if (done.has(m.version)) continue;
          await client.query("BEGIN");
          try {
            await client.query(m.sql);
            await client.query(
              "INSERT INTO campaign_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
              [m.version, m.name, new Date().toISOString()],
            );
            await client.query("COMMIT");
          } catch (err) {
            await client.query("ROLLBACK").catch(() => {});
            throw new Error(`campaign migration ${m.version}_${m.name}: ${(err as Error).message}`);
          }
        }
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [LOCK]).catch(() => {});
      }
    } finally {
      client.release();
    }
  }

  async all(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return (await this.#pool.query(numbered(sql), [...params])).rows as SqlRow[];
  }

  /** Outside a transaction: one query, which PostgreSQL runs as one (all or none). */
  batch(stmts: readonly Stmt[]): Promise<SqlRow[][]> {
    return runBatch(this.#pool, stmts);
  }

  /**
   * BEGIN goes with the transaction's first batch when it starts with one, and COMMIT with the
   * batch that says so: round trips saved.
   */
  async tx<T>(work: (q: Sql) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    let begun = false;
    let committed = false;
    try {
      const all = async (sql: string, params: readonly SqlValue[] = []) => {
        if (!begun) await client.query("BEGIN");
        begun = true;
        return (await client.query(numbered(sql), [...params])).rows as SqlRow[];
      };
      const batch = async (stmts: readonly Stmt[], o?: { commit?: boolean }) => {
        const head = begun ? [] : [{ sql: "BEGIN" }];
        const tail = o?.commit ? [{ sql: "COMMIT" }] : [];
        begun = true;
        const rows = await runBatch(client, [...head, ...stmts, ...tail]);
        committed = o?.commit === true;
        return rows.slice(head.length, head.length + stmts.length);
      };
      const result = await work({ all, batch });
      if (begun && !committed) await client.query("COMMIT");
      return result;
    } catch (err) {
      if (begun && !committed) await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
