// SQLite for the campaigns of one bridge: the same database file as its call records, reached
// through a worker thread. Statements are sent one at a time (or a batch in one message); a
// transaction holds the line until it ends, so nothing of another request runs inside it. The
// dialling operations (a claim, a batch of calls' outcomes) run on the thread whole (`near`).
import { Worker } from "node:worker_threads";
import {
  CAMPAIGN_MIGRATIONS_TABLE,
  campaignMigrations,
  type Sql,
  type SqlEngine,
  type SqlRow,
  type SqlValue,
  type Stmt,
} from "./sql.ts";
import type { DialingArgs, DialingOp, DialingResult } from "./store-dialing.ts";
import type { WorkerReply, WorkerRequest } from "./store-sqlite-worker.ts";

const SOURCE_EXT = import.meta.url.endsWith(".ts") ? "ts" : "js";

export class SqliteCampaignEngine implements SqlEngine {
  readonly engine = "sqlite";
  readonly locks = false;
  readonly #worker: Worker;
  readonly #waiting = new Map<
    number,
    { resolve: (reply: WorkerReply) => void; reject: (e: Error) => void }
  >();
  #nextId = 1;
  #line: Promise<unknown> = Promise.resolve();
  #dead: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on("message", (msg: WorkerReply) => {
      const w = this.#waiting.get(msg.id);
      this.#waiting.delete(msg.id);
      if (msg.error !== undefined) w?.reject(new Error(msg.error));
      else w?.resolve(msg);
    });
    const die = (err: Error) => {
      this.#dead ??= err;
      for (const w of this.#waiting.values()) w.reject(err);
      this.#waiting.clear();
    };
    worker.on("error", die);
    worker.on("exit", (code) => die(new Error(`the campaign store's SQLite worker exited (code ${code})`)));
  }

  /** Opens `path` (the bridge's voice-bridge.db) and applies the campaign migrations not yet in it. */
  static async open(path: string): Promise<SqliteCampaignEngine> {
    const worker = new Worker(new URL(`./store-sqlite-worker.${SOURCE_EXT}`, import.meta.url), {
      workerData: { path },
      name: "campaigns-sqlite",
    });
    await new Promise<void>((resolve, reject) => {
      worker.once("message", () => resolve());
      worker.once("error", (err: Error) => reject(new Error(`${path}: ${err.message}`)));
    });
    const engine = new SqliteCampaignEngine(worker);
    await engine.#migrate();
    return engine;
  }

  async #migrate(): Promise<void> {
    await this.tx(async (q) => {
      await q.all(CAMPAIGN_MIGRATIONS_TABLE);
      const done = new Set(
        (await q.all("SELECT version FROM campaign_migrations")).map((r) => Number(r.version)),
      );
      for (const m of await campaignMigrations("sqlite")) {
        if (done.has(m.version)) continue;
        await q.all(m.sql);
        await q.all("INSERT INTO campaign_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
          m.version,
          m.name,
          new Date().toISOString(),
        ]);
      }
    });
  }

  #ask(request: WorkerRequest): Promise<WorkerReply> {
    if (this.#dead) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      this.#waiting.set(request.id, { resolve, reject });
      this.#worker.postMessage(request);
    });
  }

  async #send(sql: string, params: readonly SqlValue[]): Promise<SqlRow[]> {
    return ((await this.#ask({ id: this.#nextId++, sql, params: [...params] })).rows ?? []) as SqlRow[];
  }

  async #sendBatch(stmts: readonly Stmt[]): Promise<SqlRow[][]> {
    if (stmts.length === 0) return [];
    const batch = stmts.map((s) => ({ sql: s.sql, params: [...(s.params ?? [])] }));
    return ((await this.#ask({ id: this.#nextId++, batch })).batch ?? []) as SqlRow[][];
  }

  /** The store thread's CPU time so far, µs (what the benchmark counts beside the event loop's). */
  async cpuUs(): Promise<number> {
    return (await this.#ask({ id: this.#nextId++, cpu: true })).cpuUs ?? 0;
  }

  /** Runs after whatever holds the line (a transaction) has let go of it. */
  #inLine<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#line.then(work, work);
    this.#line = run.catch(() => {});
    return run;
  }

  all(sql: string, params: readonly SqlValue[] = []): Promise<SqlRow[]> {
    return this.#inLine(() => this.#send(sql, params));
  }

  batch(stmts: readonly Stmt[]): Promise<SqlRow[][]> {
    return this.#inLine(() => this.#sendBatch(stmts));
  }

  near<K extends DialingOp>(op: K, ...args: DialingArgs<K>): Promise<DialingResult<K>> {
    return this.#inLine(
      async () => (await this.#ask({ id: this.#nextId++, op, args })).result as DialingResult<K>,
    );
  }

  tx<T>(work: (q: Sql) => Promise<T>): Promise<T> {
    return this.#inLine(async () => {
      await this.#send("BEGIN IMMEDIATE", []);
      let committed = false;
      try {
        const result = await work({
          all: (sql, params = []) => this.#send(sql, params),
          batch: async (stmts, o) => {
            if (!o?.commit) return this.#sendBatch(stmts);
            const rows = await this.#sendBatch([...stmts, { sql: "COMMIT" }]);
            committed = true;
            return rows.slice(0, -1);
          },
        });
        if (!committed) await this.#send("COMMIT", []);
        return result;
      } catch (err) {
        if (!committed) await this.#send("ROLLBACK", []).catch(() => {});
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await this.#line;
    if (this.#dead) return;
    await this.#ask({ id: this.#nextId++, close: true }).catch(() => {});
    await this.#worker.terminate();
  }
}
