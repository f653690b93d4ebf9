// The SQLite campaign store's worker thread: it owns its connection to the bridge's database
// (WAL: the call records' writer and this one take turns) and runs each statement it is sent, in
// order; node:sqlite blocks, so no statement runs on the event loop that carries calls. A batch
// (several statements in one message) saves the round trips of a transaction's writes, and the
// dialling operations (claim a campaign's rows, write a batch of calls' outcomes) run here whole:
// one message each way, however many statements they take.
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { parentPort, workerData } from "node:worker_threads";
import type { SqlEngine, SqlRow } from "./sql.ts";
import { DIALING, type DialingOp } from "./store-dialing.ts";

const port = parentPort;
if (!port) throw new Error("store-sqlite-worker.ts runs as a worker thread");
const db = new DatabaseSync((workerData as { path: string }).path);
// The busy timeout first: another connection opening the same new file may hold it while it turns WAL on.
db.exec("PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");

type Statement = { sql: string; params: SQLInputValue[] };
export type WorkerRequest =
  | ({ id: number } & Statement)
  | { id: number; batch: Statement[] }
  | { id: number; op: DialingOp; args: unknown[] }
  | { id: number; cpu: true }
  | { id: number; close: true };
export type WorkerReply = {
  id: number;
  rows?: unknown[];
  batch?: unknown[][];
  /** A dialling operation's result. */
  result?: unknown;
  /** This thread's CPU time so far, µs (the benchmark's figure). */
  cpuUs?: number;
  error?: string;
};

const prepared = new Map<string, ReturnType<DatabaseSync["prepare"]>>();

function run({ sql, params }: Statement): unknown[] {
  if (/^\s*(BEGIN|COMMIT|ROLLBACK)/i.test(sql) || /;\s*\S/.test(sql)) {
    db.exec(sql);
    return [];
  }
  let stmt = prepared.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    if (prepared.size < 500) prepared.set(sql, stmt);
  }
  if (stmt.columns().length > 0) return stmt.all(...params);
  stmt.run(...params);
  return [];
}

/** This connection as the dialling operations take a database: statements run at once, here. */
const here: SqlEngine = {
  engine: "sqlite",
  locks: false,
  all: async (sql, params = []) => run({ sql, params: [...params] }) as SqlRow[],
  batch: async (stmts) => stmts.map((s) => run({ sql: s.sql, params: [...(s.params ?? [])] }) as SqlRow[]),
  async tx(work) {
    db.exec("BEGIN IMMEDIATE");
    try {
      // A batch's `commit` changes nothing here: every statement is already beside the database.
      const result = await work({ all: here.all, batch: (stmts) => here.batch(stmts) });
      db.exec("COMMIT");
      return result;
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  },
  close: async () => {},
};

/** One operation at a time: each is a transaction of its own. */
let line: Promise<unknown> = Promise.resolve();

function operate(msg: { id: number; op: DialingOp; args: unknown[] }): void {
  const work = DIALING[msg.op] as (db: SqlEngine, ...args: unknown[]) => Promise<unknown>;
  line = line.then(() =>
    work(here, ...msg.args).then(
      (result) => port!.postMessage({ id: msg.id, result } satisfies WorkerReply),
      (err: Error) => port!.postMessage({ id: msg.id, error: err.message } satisfies WorkerReply),
    ),
  );
}

port.on("message", (msg: WorkerRequest) => {
  if ("close" in msg) {
    db.close();
    port.postMessage({ id: msg.id } satisfies WorkerReply);
    port.close();
    return;
  }
  if ("cpu" in msg) {
    const { user, system } = process.threadCpuUsage();
    port.postMessage({ id: msg.id, cpuUs: user + system } satisfies WorkerReply);
    return;
  }
  if ("op" in msg) {
    operate(msg);
    return;
  }
  try {
    if ("batch" in msg) port.postMessage({ id: msg.id, batch: msg.batch.map(run) } satisfies WorkerReply);
    else port.postMessage({ id: msg.id, rows: run(msg) } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({ id: msg.id, error: (err as Error).message } satisfies WorkerReply);
  }
});
port.postMessage({ id: 0, rows: [] } satisfies WorkerReply);
