// Call records of earlier versions (one <callId>.jsonl file of events per call) are imported
// into the store once, at the first start with a store: every file read (asynchronously, a few
// at a time), each call written whole unless the store has it already, the files left where
// they are. The store remembers that the directory was imported, so later starts skip it.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Logger } from "../../core/log.ts";
import type { CallEvent } from "../call-record.ts";
import { eventOfNow, type StoredEvent } from "../legacy-events.ts";
import type { CallStore } from "./call-store.ts";

const AT_ONCE = 8;

export interface ImportResult {
  imported: number;
  skipped: number;
  unreadable: string[];
}

/** Imports `dir`'s .jsonl records unless this directory was imported before; undefined when skipped. */
export async function importJsonlOnce(
  store: CallStore,
  dir: string,
  log: Logger,
): Promise<ImportResult | undefined> {
  const key = `jsonl-import:${resolve(dir)}`;
  if (await store.meta(key)) return undefined;
  const names = await readdir(dir).then(
    (all) => all.filter((n) => n.endsWith(".jsonl")).sort(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return [];
      throw new Error(`importing call records: cannot read ${dir}: ${err.message}`);
    },
  );
  const result: ImportResult = { imported: 0, skipped: 0, unreadable: [] };
  if (names.length)
    log.info(
      { dir, files: names.length },
      "call records: importing the .jsonl records of earlier versions (once; the files are kept)",
    );
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++]!;
      const events = await readFile(join(dir, name), "utf8").then(parseEvents, () => undefined);
      if (events?.[0]?.type !== "call-start") {
        result.unreadable.push(name);
        continue;
      }
      if (await store.importCall(events)) result.imported++;
      else result.skipped++;
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  await store.setMeta(key, new Date().toISOString());
  if (names.length)
    log.info({ dir, ...result, unreadable: result.unreadable.slice(0, 20) }, "call records: import done");
  return result;
}

/**
 * The events of a file, as events of now (its call-end has no outcome: legacy-events.ts); a last
 * line cut short by a crash is left out, as the old reader did.
 */
function parseEvents(text: string): CallEvent[] {
  const events: CallEvent[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    try {
      events.push(eventOfNow(JSON.parse(line) as StoredEvent));
    } catch {
      // A torn line: the turn in flight when the bridge died.
    }
  }
  return events;
}
