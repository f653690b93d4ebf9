// The results of a campaign as CSV, one line per callee in list order: the number, its status and
// last outcome, how many calls it had, their call ids (GET /calls/:id has each), its variables,
// and the last answered call's analysis (summary and fields), a column per name.
import type { ResultRow } from "./store.ts";

function cell(v: unknown): string {
  if (v === undefined || v === null) return "";
  const s = typeof v === "string" ? v : typeof v === "object" ? JSON.stringify(v) : String(v);
  // A leading = + - @ would be a formula to a spreadsheet: quoted with a ' to stay text.
  const safe = /^[=+\-@\t\r]/.test(s) && !/^[+-]?\d/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function resultsCsv(rows: readonly ResultRow[]): string {
  const vars = [...new Set(rows.flatMap((r) => Object.keys(r.variables)))];
  const fields = [...new Set(rows.flatMap((r) => Object.keys(r.analysis?.fields ?? {})))];
  const header = [
    "number",
    "timezone",
    "status",
    "outcome",
    "attempts",
    "last_attempt_at",
    "call_ids",
    "reason",
    ...vars.map((v) => `var.${v}`),
    "summary",
    ...fields.map((f) => `analysis.${f}`),
  ];
  const lines = [header.map(cell).join(",")];
  for (const r of rows)
    lines.push(
      [
        r.number,
        r.timeZone,
        r.status,
        r.outcome,
        r.attempts,
        r.lastAttemptAt,
        r.callIds.join(" "),
        r.reason,
        ...vars.map((v) => r.variables[v]),
        r.analysis?.summary,
        ...fields.map((f) => r.analysis?.fields?.[f]),
      ]
        .map(cell)
        .join(","),
    );
  return `${lines.join("\r\n")}\r\n`;
}
