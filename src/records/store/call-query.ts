// GET /calls query strings → a CallQuery, or the first bad filter named with what was wrong.
// Page cursors are opaque to clients: base64url of the last call's start and id.
import { CALL_OUTCOMES } from "../outcome.ts";
import type { CallPosition, CallQuery } from "./call-store.ts";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;
export const TRANSPORTS = ["twilio", "sip", "audiosocket", "discord", "browser"] as const;
const FILTERS = [
  "limit",
  "cursor",
  "from",
  "to",
  "transport",
  "direction",
  "outcome",
  "agent",
  "since",
  "until",
  "q",
];
const MAX_WORDS = 16;

export function encodeCursor(call: CallPosition): string {
  return Buffer.from(JSON.stringify([call.startedAt, call.callId])).toString("base64url");
}

/** The call a cursor names; undefined when it is not one encodeCursor made. */
export function decodeCursor(cursor: string): CallPosition | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown;
    if (!Array.isArray(v) || v.length !== 2) return undefined;
    const [startedAt, callId] = v as unknown[];
    if (typeof startedAt !== "string" || typeof callId !== "string") return undefined;
    if (Number.isNaN(Date.parse(startedAt))) return undefined;
    return { startedAt, callId };
  } catch {
    return undefined;
  }
}

/** The words of `q` as the full-text search takes them: letters and digits, lower case. */
export function searchWords(q: string): string[] {
  return q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A time filter: an ISO 8601 date (2026-03-01: its midnight UTC) or date-time with zone. */
function instant(raw: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(raw)) return undefined;
  const t = Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

export type ParsedQuery = { ok: true; query: CallQuery } | { ok: false; message: string };

export function parseCallQuery(raw: Record<string, unknown>): ParsedQuery {
  const bad = (message: string): ParsedQuery => ({ ok: false, message });
  for (const key of Object.keys(raw)) {
    if (!FILTERS.includes(key))
      return bad(`${key}: not a filter of GET /calls (filters: ${FILTERS.join(", ")})`);
    if (typeof raw[key] !== "string") return bad(`${key}: given more than once`);
  }
  const v = raw as Record<string, string | undefined>;
  const limit = v.limit === undefined ? DEFAULT_PAGE : /^\d+$/.test(v.limit) ? Number(v.limit) : 0;
  if (limit < 1 || limit > MAX_PAGE)
    return bad(`limit: expected a whole number from 1 to ${MAX_PAGE}, got ${JSON.stringify(v.limit)}`);
  const query: CallQuery = { limit };
  if (v.cursor !== undefined) {
    const after = decodeCursor(v.cursor);
    if (!after) return bad("cursor: not a cursor from a GET /calls page (use its next_cursor as is)");
    query.after = after;
  }
  for (const key of ["from", "to", "agent"] as const) {
    const value = v[key];
    if (value === undefined) continue;
    if (value.trim() === "" || value.length > 128)
      return bad(
        `${key}: expected a non-empty value of at most 128 characters, got ${JSON.stringify(value)}`,
      );
    query[key] = value.trim();
  }
  if (v.transport !== undefined) {
    if (!(TRANSPORTS as readonly string[]).includes(v.transport))
      return bad(`transport: expected one of ${TRANSPORTS.join(", ")}, got ${JSON.stringify(v.transport)}`);
    query.transport = v.transport;
  }
  if (v.direction !== undefined) {
    if (v.direction !== "inbound" && v.direction !== "outbound")
      return bad(`direction: expected inbound or outbound, got ${JSON.stringify(v.direction)}`);
    query.direction = v.direction;
  }
  if (v.outcome !== undefined) {
    const outcomes: readonly string[] = [...CALL_OUTCOMES, "ended", "live"];
    if (!outcomes.includes(v.outcome))
      return bad(`outcome: expected one of ${outcomes.join(", ")}, got ${JSON.stringify(v.outcome)}`);
    query.outcome = v.outcome as CallQuery["outcome"];
  }
  for (const key of ["since", "until"] as const) {
    const value = v[key];
    if (value === undefined) continue;
    const at = instant(value);
    if (!at)
      return bad(
        `${key}: expected an ISO 8601 date (2026-03-01) or date-time with zone (2026-03-01T09:30:00Z), got ${JSON.stringify(value)}`,
      );
    query[key] = at;
  }
  if (query.since && query.until && query.since >= query.until)
    return bad(`until: must be after since (${query.since}), got ${query.until}`);
  if (v.q !== undefined) {
    const words = searchWords(v.q);
    if (words.length === 0) return bad(`q: expected words to search for, got ${JSON.stringify(v.q)}`);
    if (words.length > MAX_WORDS) return bad(`q: at most ${MAX_WORDS} words, got ${words.length}`);
    query.q = words;
  }
  return { ok: true, query };
}
