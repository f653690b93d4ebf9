// The SQLite store's worker thread: owns the database (WAL), applies the migrations, and answers
// the store's messages one at a time, in order, so a read sees every write sent before it.
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { parentPort, workerData } from "node:worker_threads";
import { type CallEvent, recordFromEvents } from "../../call-record.ts";
import { eventOfNow, type StoredEvent } from "../../legacy-events.ts";
import type { CallPage, CallQuery, StoredRecord } from "../call-store.ts";
import {
  type CallRow,
  dialColumns,
  endColumns,
  iso,
  lostEnd,
  pageOf,
  SUMMARY_COLUMNS,
  startValues,
  summaryOfRow,
  TURN_COLUMNS,
  turnRowOf,
  turnWords,
} from "../event-rows.ts";
import { listSql, type SqlDialect } from "../list-sql.ts";
import { MIGRATIONS_TABLE, migrationsOf } from "../migrations.ts";
import type { EventWrite, FromWorker, SqliteWorkerData, ToWorker } from "./protocol.ts";

const port = parentPort;
if (!port) throw new Error("sqlite/worker.ts runs as a worker thread (new Worker), not on its own");
const { path, instance } = workerData as SqliteWorkerData;

const db = new DatabaseSync(path);
// WAL: readers never wait for the writer. NORMAL: a commit is in the WAL before the next
// statement, so a crash of the bridge loses nothing written; only a power cut can lose the last commits.
db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;");

function migrate(): string[] {
  db.exec(MIGRATIONS_TABLE);
  const done = new Set(
    (db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[]).map(
      (r) => r.version,
    ),
  );
  const applied: string[] = [];
  for (const m of migrationsOf("sqlite")) {
    if (done.has(m.version)) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw new Error(`migration ${m.version}_${m.name}: ${(err as Error).message}`);
    }
    applied.push(`${m.version}_${m.name}`);
  }
  return applied;
}
const applied = migrate();

const q = {
  maxSeq: db.prepare("SELECT max(seq) AS seq FROM events WHERE call_id = ?"),
  event: db.prepare("INSERT INTO events (call_id, seq, type, at, body) VALUES (?, ?, ?, ?, ?)"),
  start: db.prepare(
    "INSERT OR IGNORE INTO calls (call_id, instance, transport, from_number, to_number, agent, started_at, direction) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  ),
  turn: db.prepare(
    `INSERT OR REPLACE INTO turns (call_id, seq, ${TURN_COLUMNS.join(", ")}) VALUES (?, ?, ${TURN_COLUMNS.map(() => "?").join(", ")})`,
  ),
  words: db.prepare("INSERT INTO turn_words (call_id, text) VALUES (?, ?)"),
  dial: db.prepare("UPDATE calls SET dial_outcome = ?, dial_reason = ?, amd = ? WHERE call_id = ?"),
  counted: db.prepare("UPDATE calls SET turns = turns + 1 WHERE call_id = ?"),
  end: db.prepare(
    "UPDATE calls SET ended_at = ?, end_reason = ?, outcome = ?, duration_ms = ? WHERE call_id = ? AND ended_at IS NULL",
  ),
  exists: db.prepare("SELECT 1 AS x FROM calls WHERE call_id = ?"),
  events: db.prepare("SELECT body FROM events WHERE call_id = ? ORDER BY seq"),
  call: db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM calls WHERE call_id = ?`),
  recording: db.prepare("UPDATE calls SET recording_instance = ?, recording_path = ? WHERE call_id = ?"),
  newReport: db.prepare(
    "INSERT OR IGNORE INTO reports (report_id, call_id, state, attempts, updated_at) VALUES (?, ?, ?, 0, ?)",
  ),
  attempt: db.prepare(
    "UPDATE reports SET state = ?, attempts = attempts + 1, last_status = ?, updated_at = ? WHERE report_id = ?",
  ),
  getMeta: db.prepare("SELECT value FROM meta WHERE key = ?"),
  setMeta: db.prepare(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
  ),
};

/** The next event number of each call written by this run (saves a max() per event). */
const nextSeq = new Map<string, number>();

function writeEvent(callId: string, event: CallEvent): void {
  let seq = nextSeq.get(callId);
  if (seq === undefined) seq = ((q.maxSeq.get(callId) as { seq: number | null }).seq ?? -1) + 1;
  nextSeq.set(callId, seq + 1);
  q.event.run(callId, seq, event.type, iso(event.at), JSON.stringify(event));
  if (event.type === "call-start") {
    q.start.run(...startValues(callId, instance, event));
    return;
  }
  if (event.type === "dial") {
    const d = dialColumns(event);
    q.dial.run(d.dial_outcome, d.dial_reason, d.amd, callId);
    return;
  }
  if (event.type === "call-end") {
    const e = endColumns(event);
    q.end.run(e.ended_at, e.end_reason, e.outcome, e.duration_ms, callId);
    nextSeq.delete(callId);
    return;
  }
  const turn = turnRowOf(event);
  if (!turn) return;
  q.turn.run(callId, seq, ...TURN_COLUMNS.map((c) => turn[c] as SQLInputValue));
  q.counted.run(callId);
  const words = turnWords(event);
  if (words) q.words.run(callId, words);
}

function inTransaction<T>(work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}

function get(callId: string): StoredRecord | undefined {
  const rows = q.events.all(callId) as { body: string }[];
  const record = recordFromEvents(rows.map((r) => eventOfNow(JSON.parse(r.body) as StoredEvent)));
  if (!record) return undefined;
  const call = q.call.get(callId) as CallRow | undefined;
  const summary = call && summaryOfRow(call);
  return {
    ...record,
    instance: summary?.instance ?? instance,
    ...(summary?.recording ? { recording: summary.recording } : {}),
  };
}

const dialect: SqlDialect = {
  param: () => "?",
  // One lookup per word (each may be in another turn); quoted: no FTS5 syntax from the outside.
  search: (words, param) =>
    words
      .map(
        (w) =>
          `call_id IN (SELECT call_id FROM turn_words WHERE turn_words MATCH ${param(`"${w.replaceAll('"', '""')}"`)})`,
      )
      .join(" AND "),
};

function list(query: CallQuery): CallPage {
  const { sql, args } = listSql(query, dialect);
  const rows = db.prepare(sql).all(...args) as unknown as CallRow[];
  return pageOf(rows, query.limit);
}

/**
 * Calls this instance left live when it died (killed, power cut): ended now with reason
 * `instance lost`, so no call stays live forever. Run once at start, before any new call.
 */
function endLostCalls(): string[] {
  const lost = db
    .prepare("SELECT call_id, started_at FROM calls WHERE ended_at IS NULL AND instance = ?")
    .all(instance) as { call_id: string; started_at: string }[];
  if (lost.length === 0) return [];
  const now = new Date();
  inTransaction(() => {
    for (const c of lost) writeEvent(c.call_id, lostEnd(c.started_at, now));
  });
  return lost.map((c) => c.call_id);
}

function handle(msg: ToWorker): unknown {
  switch (msg.op) {
    case "write":
      inTransaction(() => {
        for (const w of msg.writes as EventWrite[]) writeEvent(w.callId, w.event);
      });
      return undefined;
    case "get":
      return get(msg.callId);
    case "list":
      return list(msg.query);
    case "recording":
      q.recording.run(instance, msg.path, msg.callId);
      return undefined;
    case "report":
      if (msg.callId) q.newReport.run(msg.reportId, msg.callId, msg.state, new Date().toISOString());
      else q.attempt.run(msg.state, msg.status ?? null, new Date().toISOString(), msg.reportId);
      return undefined;
    case "import": {
      const start = msg.events[0];
      if (start?.type !== "call-start") return false;
      return inTransaction(() => {
        if (q.exists.get(start.callId)) return false;
        for (const e of msg.events) writeEvent(start.callId, e);
        return true;
      });
    }
    case "meta":
      if (msg.value === undefined) return (q.getMeta.get(msg.key) as { value: string } | undefined)?.value;
      q.setMeta.run(msg.key, msg.value);
      return undefined;
    case "close":
      db.close();
      return undefined;
  }
}

port.on("message", (msg: ToWorker) => {
  let reply: FromWorker;
  try {
    reply = { id: msg.id, ok: true, result: handle(msg) };
  } catch (err) {
    reply = { id: msg.id, ok: false, error: (err as Error).message };
  }
  port.postMessage(reply);
  if (msg.op === "close") port.close();
});
const lost = endLostCalls();
port.postMessage({ id: 0, ready: true, migrations: applied, lost } satisfies FromWorker);
