// PostgreSQL, when DATABASE_URL is set: every bridge on the database sees every call. Writes go
// through an ordered queue drained by one transaction per batch; while the database is down the
// queue holds them (calls go on; /readyz and the log say so) and a reconnect with backoff writes
// them once it is back, nothing lost. Reads use the pool. Other bridges' events arrive by
// LISTEN/NOTIFY (listener.ts); each bridge says it is alive, and ends the live calls of a bridge
// that stopped saying so (instances.ts).
import pg from "pg";
import type { Logger } from "../../../core/log.ts";
import type { CallEvent } from "../../call-record.ts";
import { recordFromEvents } from "../../call-record.ts";
import { eventOfNow, type StoredEvent } from "../../legacy-events.ts";
import type { CallPage, CallQuery, CallStore, ReportState, StoredRecord } from "../call-store.ts";
import { type CallRow, pageOf, SUMMARY_COLUMNS, summaryOfRow } from "../event-rows.ts";
import { listSql, type SqlDialect } from "../list-sql.ts";
import { MissedWrites } from "../missed-writes.ts";
import { InstanceWatch } from "./instances.ts";
import { type RemoteEvent, RemoteListener } from "./listener.ts";
import { migrate } from "./migrate.ts";
import { type Write, writeBatch } from "./write-batch.ts";

export interface PostgresStoreOptions {
  url: string;
  instance: string;
  log: Logger;
  /** How often this bridge says it is alive (default 5 s). */
  heartbeatMs?: number;
  /** A bridge silent this long is lost: its live calls are ended (default 30 s). */
  lostAfterMs?: number;
  /** Longest wait between reconnection attempts (default 10 s). */
  maxBackoffMs?: number;
}

type Op =
  | { kind: "event"; write: Write }
  | { kind: "recording"; callId: string; path: string }
  | { kind: "report"; reportId: string; state: ReportState; status?: number; callId?: string };

const BATCH = 500;

const dialect: SqlDialect = {
  param: (n) => `$${n}`,
  // The call's words (all its turns, migration 0002); letters and digits only (call-query.ts),
  // so `a & b` is a valid tsquery of whole words.
  search: (words, param) => `words @@ to_tsquery('simple', ${param(words.join(" & "))})`,
};

/** A failure that says "not now" (no connection, the server going down), not "never". */
export function transient(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return /^(08|57|53|40)/.test(code);
}

export class PostgresCallStore implements CallStore {
  readonly engine = "postgres";
  readonly #pool: pg.Pool;
  readonly #o: Required<Omit<PostgresStoreOptions, "url">>;
  readonly #queue: Op[] = [];
  /** Writes ever queued, and ever written: a read waits for those queued before it. */
  #queued = 0;
  #written = 0;
  readonly #readers: { upTo: number; resolve: () => void }[] = [];
  /** Write barriers: they wait for the database to come back (reads do not). */
  readonly #barriers: { upTo: number; resolve: (written: boolean) => void }[] = [];
  readonly #missed = new MissedWrites();
  #nextSeq = new Map<string, number>();
  #drain: Promise<void> | undefined;
  #migrated = false;
  #trouble: string | undefined;
  #downSince: number | undefined;
  #closed = false;
  #wake: (() => void) | undefined;
  readonly #listener: RemoteListener;
  readonly #instances: InstanceWatch;

  private constructor(opts: PostgresStoreOptions) {
    this.#o = { heartbeatMs: 5000, lostAfterMs: 30_000, maxBackoffMs: 10_000, ...opts };
    this.#pool = new pg.Pool({ connectionString: opts.url, max: 8, connectionTimeoutMillis: 5000 });
    // An idle client losing its connection is reported here; the next query reconnects.
    this.#pool.on("error", (err) => this.#down(err));
    this.#listener = new RemoteListener(
      opts.url,
      opts.instance,
      this.#pool,
      this.#o.log,
      this.#o.maxBackoffMs,
    );
    this.#instances = new InstanceWatch(this.#pool, this.#o, (writes) => {
      for (const write of writes) this.#enqueue({ kind: "event", write });
    });
  }

  /** Connects and applies the migrations; if the database is down, keeps trying in the background. */
  static async open(opts: PostgresStoreOptions): Promise<PostgresCallStore> {
    const store = new PostgresCallStore(opts);
    await store.#tryMigrate();
    store.#kick();
    store.#listener.start();
    await store.#instances.start();
    return store;
  }

  get trouble(): string | undefined {
    return this.#trouble && `${this.#trouble}; ${this.#queue.length} writes waiting`;
  }

  /** Events of other bridges' calls, as they happen. */
  watchOthers(listener: (e: RemoteEvent) => void): () => void {
    return this.#listener.watch(listener);
  }

  append(callId: string, event: CallEvent): void {
    this.#enqueue({ kind: "event", write: { callId, event } });
  }

  setRecording(callId: string, path: string): void {
    this.#enqueue({ kind: "recording", callId, path });
  }

  setReport(reportId: string, state: ReportState, status?: number, callId?: string): void {
    this.#enqueue({
      kind: "report",
      reportId,
      state,
      ...(status !== undefined ? { status } : {}),
      ...(callId ? { callId } : {}),
    });
  }

  #enqueue(op: Op): void {
    this.#queue.push(op);
    this.#queued++;
    this.#kick();
  }

  /** Waits until what was queued before now is written (not while the database is down: reads fail then). */
  async #caughtUp(): Promise<void> {
    if (this.#written >= this.#queued || this.#trouble) return;
    await new Promise<void>((resolve) => this.#readers.push({ upTo: this.#queued, resolve }));
  }

  async written(callId: string): Promise<boolean> {
    const upTo = this.#queued;
    const settled =
      this.#written >= upTo ||
      (!this.#closed && (await new Promise<boolean>((resolve) => this.#barriers.push({ upTo, resolve }))));
    return !this.#missed.take(callId) && settled;
  }

  #wrote(n: number): void {
    this.#written += n;
    while (this.#barriers.length && this.#written >= this.#barriers[0]!.upTo)
      this.#barriers.shift()!.resolve(true);
    for (let i = this.#readers.length - 1; i >= 0; i--) {
      const r = this.#readers[i]!;
      if (this.#written >= r.upTo || this.#trouble) {
        this.#readers.splice(i, 1);
        r.resolve();
      }
    }
  }

  async get(callId: string): Promise<StoredRecord | undefined> {
    await this.#caughtUp();
    const events = await this.#pool.query<{ body: StoredEvent }>(
      "SELECT body FROM events WHERE call_id = $1 ORDER BY seq",
      [callId],
    );
    const record = recordFromEvents(events.rows.map((r) => eventOfNow(r.body)));
    if (!record) return undefined;
    const row = (
      await this.#pool.query<CallRow>(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE call_id = $1`, [callId])
    ).rows[0];
    const summary = row && summaryOfRow(row);
    return {
      ...record,
      instance: summary?.instance ?? this.#o.instance,
      ...(summary?.recording ? { recording: summary.recording } : {}),
    };
  }

  async list(query: CallQuery): Promise<CallPage> {
    await this.#caughtUp();
    const { sql, args } = listSql(query, dialect);
    return pageOf((await this.#pool.query<CallRow>(sql, args)).rows, query.limit);
  }

  async importCall(events: CallEvent[]): Promise<boolean> {
    const start = events[0];
    if (start?.type !== "call-start") return false;
    const client = await this.#pool.connect();
    try {
      await client.query("BEGIN");
      const exists = await client.query("SELECT 1 FROM calls WHERE call_id = $1 FOR UPDATE", [start.callId]);
      if (exists.rowCount) {
        await client.query("ROLLBACK");
        return false;
      }
      await writeBatch(
        client,
        this.#o.instance,
        events.map((event) => ({ callId: start.callId, event })),
        new Map(),
      );
      await client.query("COMMIT");
      return true;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async meta(key: string): Promise<string | undefined> {
    return (await this.#pool.query<{ value: string }>("SELECT value FROM meta WHERE key = $1", [key])).rows[0]
      ?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.#pool.query(
      "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [key, value],
    );
  }

  /** Resolves once the queue is written; while the database is down, once the writes are queued. */
  async flush(): Promise<void> {
    while (this.#drain && !this.#trouble) await this.#drain;
  }

  async close(): Promise<void> {
    this.#instances.stop();
    await this.#listener.stop();
    // A last chance for what is queued (a few seconds); what is left is said in the log.
    const deadline = Date.now() + 5000;
    while (this.#queue.length && Date.now() < deadline) {
      this.#wake?.();
      await new Promise((r) => setTimeout(r, 50));
    }
    this.#closed = true;
    this.#wake?.();
    await this.#drain;
    for (const barrier of this.#barriers.splice(0)) barrier.resolve(false);
    if (this.#queue.length)
      this.#o.log.error(
        { writes: this.#queue.length },
        "call records: the database is still unreachable at shutdown; these writes are lost",
      );
    await this.#pool.end();
  }

  async #tryMigrate(): Promise<void> {
    try {
      const applied = await migrate(this.#pool);
      this.#migrated = true;
      this.#up();
      this.#o.log.info(
        { instance: this.#o.instance, migrationsApplied: applied },
        "call records: PostgreSQL",
      );
    } catch (err) {
      if (!transient(err)) throw err;
      this.#down(err as Error);
    }
  }

  #kick(): void {
    if (this.#drain) {
      this.#wake?.();
      return;
    }
    this.#drain = this.#run().finally(() => {
      this.#drain = undefined;
      if (this.#queue.length && !this.#closed) this.#kick();
    });
  }

  async #run(): Promise<void> {
    let backoff = 250;
    let single = 0;
    while (!this.#closed && (this.#queue.length || !this.#migrated)) {
      if (!this.#migrated) await this.#tryMigrate();
      if (this.#migrated) {
        const batch = this.#queue.slice(0, single > 0 ? 1 : BATCH);
        try {
          await this.#write(batch);
          this.#queue.splice(0, batch.length);
          this.#wrote(batch.length);
          if (single > 0) single--;
          backoff = 250;
          this.#up();
          continue;
        } catch (err) {
          if (!transient(err)) {
            if (batch.length > 1) {
              // One bad write must not hold back the others: write them one at a time to find it.
              single = batch.length;
              continue;
            }
            const refused = this.#queue.shift();
            if (refused?.kind === "event") this.#missed.add([refused.write.callId]);
            this.#wrote(1);
            single = Math.max(0, single - 1);
            this.#o.log.error(
              { err, op: batch[0] },
              "call records: the database refused this write; dropped",
            );
            continue;
          }
          this.#down(err as Error);
        }
      }
      if (this.#closed) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, backoff);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
      backoff = Math.min(this.#o.maxBackoffMs, backoff * 2);
    }
  }

  async #write(batch: Op[]): Promise<void> {
    const client = await this.#pool.connect();
    let broken: Error | undefined;
    try {
      await client.query("BEGIN");
      const seqs = new Map(this.#nextSeq);
      for (const op of batch) {
        if (op.kind === "event") await writeBatch(client, this.#o.instance, [op.write], seqs);
        else if (op.kind === "recording")
          await client.query(
            "UPDATE calls SET recording_instance = $1, recording_path = $2 WHERE call_id = $3",
            [this.#o.instance, op.path, op.callId],
          );
        else if (op.callId)
          await client.query(
            `INSERT INTO reports (report_id, call_id, state, attempts, updated_at) VALUES ($1, $2, $3, 0, $4)
             ON CONFLICT (report_id) DO NOTHING`,
            [op.reportId, op.callId, op.state, new Date().toISOString()],
          );
        else
          await client.query(
            "UPDATE reports SET state = $1, attempts = attempts + 1, last_status = $2, updated_at = $3 WHERE report_id = $4",
            [op.state, op.status ?? null, new Date().toISOString(), op.reportId],
          );
      }
      await client.query("COMMIT");
      for (const op of batch)
        if (op.kind === "event" && op.write.event.type === "call-end") seqs.delete(op.write.callId);
      this.#nextSeq = seqs;
    } catch (err) {
      broken = err as Error;
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      // A client whose connection broke is not given back to the pool.
      client.release(broken && transient(broken) ? broken : undefined);
    }
  }

  #down(err: Error): void {
    const why = err.message || (err as { code?: string }).code || String(err);
    if (this.#trouble === undefined) {
      this.#downSince = Date.now();
      this.#o.log.error(
        { err: why },
        "call records: PostgreSQL unreachable; calls go on, their records wait in memory until it is back",
      );
    }
    this.#trouble = `PostgreSQL unreachable since ${new Date(this.#downSince!).toISOString()} (${why})`;
    this.#wrote(0);
  }

  #up(): void {
    if (this.#trouble === undefined) return;
    this.#o.log.info(
      { downMs: Date.now() - (this.#downSince ?? Date.now()) },
      "call records: PostgreSQL is back; the waiting writes are written",
    );
    this.#trouble = undefined;
    this.#downSince = undefined;
  }
}
