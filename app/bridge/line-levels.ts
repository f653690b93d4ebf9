// The lines' usual caller levels (session/line-level.ts) outlive the process and are shared: at
// start each line is taught the levels its last calls' records keep, and on a database several
// bridges share each bridge learns the others' calls as they end. Without this a restarted
// bridge, or each of several behind one proxy, judged its first calls on every line as if it had
// never had one: a talker behind those callers stopped the greeting until three calls each had
// taught it again.
import type { Logger } from "../../src/core/log.ts";
import type { CallEvent } from "../../src/records/call-record.ts";
import { MAX_PAGE } from "../../src/records/store/call-query.ts";
import type { CallPosition, CallStore } from "../../src/records/store/call-store.ts";
import { LINE_CALLS, LineLevels, teachesLine } from "../../src/session/line-level.ts";

/** How many of the latest ended calls are read at start (pages of MAX_PAGE). */
export const SEED_CALLS = 2 * MAX_PAGE;
/** Other bridges' calls begun and not yet ended that are remembered (a bridge that died leaves its calls open). */
const OPEN_ELSEWHERE_MAX = 10_000;

interface Taught {
  db: number;
  speechMs: number;
}

/** A call's levels as its call-end event keeps them, if they can teach its line. */
function taught(event: CallEvent | undefined): Taught | undefined {
  if (event?.type !== "call-end") return undefined;
  const l = event.levels;
  if (l?.callerDb === undefined || l.callerSpeechMs === undefined) return undefined;
  return teachesLine(l.callerDb, l.callerSpeechMs)
    ? { db: l.callerDb, speechMs: l.callerSpeechMs }
    : undefined;
}

/**
 * The bridge's lines, taught before it takes its first call by the records' ended calls that
 * started before `until` (the bridge's start: its own calls teach their lines as they end; a few
 * hundred reads by key at most), and, when the store is shared, by other bridges' calls as they
 * end. Records that cannot be read teach nothing (logged): the lines learn from calls anew.
 */
export async function openLineLevels(
  store: CallStore,
  log: Logger,
  until = new Date().toISOString(),
): Promise<{ lines: LineLevels; close: () => void }> {
  const lines = new LineLevels();
  const close = watchOthers(store, lines);
  await seed(store, lines, until).then(
    (counts) => {
      if (Object.keys(counts).length)
        log.info({ calls: counts }, "line levels: taught by the records' last calls");
    },
    (err: Error) =>
      log.warn({ err: err.message }, "line levels: records not read; the lines learn from calls anew"),
  );
  return { lines, close };
}

/** Teaches each line its latest calls' levels, oldest first; resolves to how many per line. */
async function seed(store: CallStore, lines: LineLevels, until: string): Promise<Record<string, number>> {
  const byLine = new Map<string, Taught[]>();
  let after: CallPosition | undefined;
  for (let read = 0; read < SEED_CALLS; ) {
    const page = await store.list({ outcome: "ended", until, limit: MAX_PAGE, ...(after ? { after } : {}) });
    for (const call of page.calls) {
      const got = byLine.get(call.transport) ?? [];
      byLine.set(call.transport, got);
      if (got.length >= LINE_CALLS) continue;
      const record = await store.get(call.callId);
      const t = taught(record?.events.findLast((e) => e.type === "call-end"));
      if (t) got.push(t);
    }
    read += page.calls.length;
    if (!page.next) break;
    after = page.next;
  }
  const counts: Record<string, number> = {};
  for (const [line, calls] of byLine) {
    if (calls.length === 0) continue;
    // Newest first as listed: the oldest is learned first, so the ring ends on the newest.
    for (const t of calls.reverse()) lines.for(line).learn(t.db, t.speechMs);
    counts[line] = calls.length;
  }
  return counts;
}

/** Other bridges' calls teach their lines as they end (a shared store only); returns the unwatch. */
function watchOthers(store: CallStore, lines: LineLevels): () => void {
  if (!store.watchOthers) return () => {};
  const open = new Map<string, string>();
  return store.watchOthers(({ callId, event }) => {
    if (event.type === "call-start") {
      if (open.size >= OPEN_ELSEWHERE_MAX) open.clear();
      open.set(callId, event.transport);
      return;
    }
    if (event.type !== "call-end") return;
    const line = open.get(callId);
    open.delete(callId);
    const t = taught(event);
    if (line !== undefined && t) lines.for(line).learn(t.db, t.speechMs);
  });
}
