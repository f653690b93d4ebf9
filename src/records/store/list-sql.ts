// GET /calls as SQL, the same for both engines but for placeholders and full-text search:
// filters on indexed columns, newest first by (started_at, call_id), keyset paging from the
// cursor's call, one row more than the page to know whether another page follows.
import type { CallQuery } from "./call-store.ts";
import { SUMMARY_COLUMNS } from "./event-rows.ts";

export interface SqlDialect {
  /** The n-th placeholder (1-based): `?` or `$n`. */
  param(n: number): string;
  /** The condition for calls in which every one of `words` was said, its parameters added by `param`. */
  search(words: string[], param: (value: string) => string): string;
}

export function listSql(query: CallQuery, dialect: SqlDialect): { sql: string; args: (string | number)[] } {
  const where: string[] = [];
  const args: (string | number)[] = [];
  const p = (value: string | number) => {
    args.push(value);
    return dialect.param(args.length);
  };
  const eq = (column: string, value: string | undefined) => {
    if (value !== undefined) where.push(`${column} = ${p(value)}`);
  };
  eq("from_number", query.from);
  eq("to_number", query.to);
  eq("transport", query.transport);
  eq("direction", query.direction);
  eq("agent", query.agent);
  if (query.outcome === "live") where.push("ended_at IS NULL");
  else if (query.outcome === "ended") where.push("ended_at IS NOT NULL");
  else eq("outcome", query.outcome);
  if (query.since) where.push(`started_at >= ${p(query.since)}`);
  if (query.until) where.push(`started_at < ${p(query.until)}`);
  // Every word, each said in any turn of the call (by either side).
  if (query.q) where.push(dialect.search(query.q, p));
  if (query.after) {
    const { startedAt, callId } = query.after;
    where.push(`(started_at < ${p(startedAt)} OR (started_at = ${p(startedAt)} AND call_id < ${p(callId)}))`);
  }
  const sql = `SELECT ${SUMMARY_COLUMNS} FROM calls ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
    ORDER BY started_at DESC, call_id DESC LIMIT ${p(query.limit + 1)}`;
  return { sql, args };
}
