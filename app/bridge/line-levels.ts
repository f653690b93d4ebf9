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
import { LINE_CALLS, LINE_LEARN_MS, LineLevels } from "../../src/session/line-level.ts";

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
  if (l?.callerDb === undefined || l.callerSpeechMs === undefined || l.callerSpeechMs < LINE_LEARN_MS)
    return undefined;
  return { db: l.callerDb, speechMs: l.callerSpeechMs };
}

/**
 * The bridge's lines, taught by the records: the ended calls that started before `until` (the
 * bridge's own start: its own calls teach their lines as they end), read off the call path, and,
 * when the store is shared, other bridges' calls as they end. A record that cannot be read teaches
 * nothing; the lines go on learning from this bridge's calls.
 */
export function lineLevelsFromRecords(
  store: CallStore,
  until: string,
  log: Logger,
): { lines: LineLevels; seeded: Promise<void>; close: () => void } {
  const lines = new LineLevels();
  const unwatch = watchOthers(store, lines);
  const stop = { stopped: false };
  const seeded = seed(store, lines, until, stop).then(
    (counts) => {
      if (Object.keys(counts).length)
        log.info({ calls: counts }, "line levels: taught by the records' last calls");
    },
    (err: Error) =>
      log.warn({ err: err.message }, "line levels: records not read; the lines learn from calls anew"),
  );
  const close = () => {
    stop.stopped = true;
    unwatch();
  };
  return { lines, seeded, close };
}

/**
 * The bridge's lines as it starts, taught before it takes its first call (a few hundred reads by
 * key at most; a failure is logged, and the lines learn from calls anew).
 */
export async function openLineLevels(
  store: CallStore,
  log: Logger,
): Promise<{ lines: LineLevels; close: () => void }> {
  const { lines, seeded, close } = lineLevelsFromRecords(store, new Date().toISOString(), log);
  await seeded;
  return { lines, close };
}

/** Teaches each line its latest calls' levels, oldest first; resolves to how many per line. */
async function seed(
  store: CallStore,
  lines: LineLevels,
  until: string,
  stop: { stopped: boolean },
): Promise<Record<string, number>> {
  const byLine = new Map<string, Taught[]>();
  let after: CallPosition | undefined;
  for (let read = 0; read < SEED_CALLS && !stop.stopped; ) {
    const page = await store.list({ outcome: "ended", until, limit: MAX_PAGE, ...(after ? { after } : {}) });
    for (const call of page.calls) {
      if (stop.stopped) break;
      const got = byLine.get(call.transport) ?? [];
      if (got.length >= LINE_CALLS) continue;
      const record = await store.get(call.callId);
      const t = taught(record?.events.findLast((e) => e.type === "call-end"));
      if (t) byLine.set(call.transport, [...got, t]);
    }
    read += page.calls.length;
    if (!page.next) break;
    after = page.next;
  }
  const counts: Record<string, number> = {};
  if (stop.stopped) return counts;
  for (const [line, calls] of byLine) {
    // Newest first as listed: the oldest is learned first, so the ring ends on the newest.
    for (const t of calls.reverse()) lines.for(line).learn(t.db, t.speechMs);
    counts[line] = calls.length;
  }
  return counts;
}

/** Other bridges' calls teach their lines as they end (a shared store only). */
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
