// The embedded engine: SQLite in the data dir (<dataDir>/voice-bridge.db), owned by a worker
// thread. Appends are gathered for one turn of the event loop and written in one transaction,
// so a burst of events from many calls costs one commit; every event reaches the database within
// milliseconds, so a crash loses at most what was in flight.
import { Worker } from "node:worker_threads";
import type { CallEvent } from "../../call-record.ts";
import type { CallPage, CallQuery, CallStore, ReportState, StoredRecord } from "../call-store.ts";
import { MissedWrites } from "../missed-writes.ts";
import type { EventWrite, FromWorker, SqliteWorkerData, ToWorker } from "./protocol.ts";

// The sources run as .ts in a checkout and as compiled .js in the installed package.
const SOURCE_EXT = import.meta.url.endsWith(".ts") ? "ts" : "js";

export const SQLITE_FILE = "voice-bridge.db";

type Request = ToWorker extends infer T ? (T extends { id: number } ? Omit<T, "id"> : never) : never;

export interface SqliteStoreOptions {
  path: string;
  instance: string;
  /** Hears failed writes (the events stay in memory for live calls; logged by the bridge). */
  onWriteError: (err: Error, callIds: string[]) => void;
}

export class SqliteCallStore implements CallStore {
  readonly engine = "sqlite";
  readonly path: string;
  /** Migrations applied by this start. */
  readonly migrations: string[];
  /** Calls an earlier run of this instance left live, ended as `instance lost` by this start. */
  readonly lost: string[];
  readonly #worker: Worker;
  readonly #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #onWriteError: SqliteStoreOptions["onWriteError"];
  #nextId = 1;
  #writes: EventWrite[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  #dead: Error | undefined;
  readonly #missed = new MissedWrites();

  private constructor(
    worker: Worker,
    opts: SqliteStoreOptions,
    ready: { migrations: string[]; lost: string[] },
  ) {
    this.#worker = worker;
    this.path = opts.path;
    this.#onWriteError = opts.onWriteError;
    this.migrations = ready.migrations;
    this.lost = ready.lost;
    worker.on("message", (msg: FromWorker) => {
      if (!("ok" in msg)) return;
      const waiting = this.#waiting.get(msg.id);
      this.#waiting.delete(msg.id);
      if (msg.ok) waiting?.resolve(msg.result);
      else waiting?.reject(new Error(msg.error));
    });
    worker.on("error", (err: Error) => this.#die(err));
    worker.on("exit", (code) => this.#die(new Error(`the SQLite worker exited (code ${code})`)));
  }

  /** Opens (or creates) the database and applies the migrations not yet in it. */
  static async open(opts: SqliteStoreOptions): Promise<SqliteCallStore> {
    const data: SqliteWorkerData = { path: opts.path, instance: opts.instance };
    const worker = new Worker(new URL(`./worker.${SOURCE_EXT}`, import.meta.url), {
      workerData: data,
      name: "sqlite",
    });
    const ready = await new Promise<{ migrations: string[]; lost: string[] }>((resolve, reject) => {
      const onReady = (msg: FromWorker) => {
        if ("ready" in msg) {
          worker.off("message", onReady);
          worker.off("error", reject);
          resolve(msg);
        }
      };
      worker.on("message", onReady);
      worker.once("error", (err: Error) => reject(new Error(`${opts.path}: ${err.message}`)));
    });
    return new SqliteCallStore(worker, opts, ready);
  }

  get trouble(): string | undefined {
    return this.#dead && `the call records database is closed: ${this.#dead.message}`;
  }

  append(callId: string, event: CallEvent): void {
    this.#writes.push({ callId, event });
    this.#scheduled ??= setImmediate(() => this.#sendWrites());
  }

  #sendWrites(): void {
    this.#scheduled = undefined;
    const writes = this.#writes;
    this.#writes = [];
    if (writes.length === 0) return;
    this.#call({ op: "write", writes }).catch((err: Error) => {
      const callIds = [...new Set(writes.map((w) => w.callId))];
      this.#missed.add(callIds);
      this.#onWriteError(err, callIds);
    });
  }

  async get(callId: string): Promise<StoredRecord | undefined> {
    return (await this.#call({ op: "get", callId })) as StoredRecord | undefined;
  }

  async list(query: CallQuery): Promise<CallPage> {
    return (await this.#call({ op: "list", query })) as CallPage;
  }

  setRecording(callId: string, path: string): void {
    this.#sendWrites();
    this.#call({ op: "recording", callId, path }).catch((err: Error) => this.#onWriteError(err, [callId]));
  }

  setReport(reportId: string, state: ReportState, status?: number, callId?: string): void {
    this.#sendWrites();
    const request = {
      op: "report",
      reportId,
      state,
      ...(status !== undefined ? { status } : {}),
      ...(callId ? { callId } : {}),
    } as const;
    this.#call(request).catch((err: Error) => this.#onWriteError(err, callId ? [callId] : []));
  }

  async importCall(events: CallEvent[]): Promise<boolean> {
    return (await this.#call({ op: "import", events })) as boolean;
  }

  async meta(key: string): Promise<string | undefined> {
    return (await this.#call({ op: "meta", key })) as string | undefined;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.#call({ op: "meta", key, value });
  }

  async flush(): Promise<void> {
    this.#sendWrites();
    // The worker answers in order: once this answer is back, every write before it is done.
    await this.#call({ op: "meta", key: "" }).catch(() => {});
  }

  async written(callId: string): Promise<boolean> {
    this.#sendWrites();
    // The worker answers in order, and a refused write is rejected (and noted) before this answer.
    const settled = await this.#call({ op: "meta", key: "" }).then(
      () => true,
      () => false,
    );
    return !this.#missed.take(callId) && settled;
  }

  async close(): Promise<void> {
    await this.flush();
    if (this.#dead) return;
    await this.#call({ op: "close" }).catch(() => {});
    await this.#worker.terminate();
  }

  #call(request: Request): Promise<unknown> {
    if (this.#dead) return Promise.reject(this.#dead);
    // The worker answers in order: writes appended before this request go first, so a read
    // sees every event appended before it (the console lists a call the moment it hears it end).
    if (request.op !== "write" && this.#writes.length) this.#sendWrites();
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id } as ToWorker);
    });
  }

  #die(err: Error): void {
    this.#dead ??= err;
    for (const w of this.#waiting.values()) w.reject(this.#dead);
    this.#waiting.clear();
  }
}
