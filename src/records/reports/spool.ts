// Reports waiting for delivery, one file each: <dir>/<reportId>.json holds the exact body that is
// sent. A report is written (durably: durable-file.ts) before the first attempt and removed once
// the receiver took it, so what is in the directory is what has not been delivered yet — after a
// receiver outage, a crash or a restart alike.
import { mkdirSync } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { TEMP_PREFIX, writeFileDurably } from "../../core/durable-file.ts";

const ID = /^[\w-]{1,128}$/;

export class ReportSpool {
  readonly dir: string;

  /** Creates `dir` if needed (throws if it cannot: a misconfigured directory should stop start-up). */
  constructor(dir: string) {
    mkdirSync(dir, { recursive: true });
    this.dir = dir;
  }

  pathOf(reportId: string): string {
    if (!ID.test(reportId)) throw new Error(`not a report id: ${JSON.stringify(reportId)}`);
    return join(this.dir, `${reportId}.json`);
  }

  async put(reportId: string, body: Uint8Array): Promise<void> {
    await writeFileDurably(this.pathOf(reportId), body);
  }

  async read(reportId: string): Promise<Buffer> {
    return readFile(this.pathOf(reportId));
  }

  async remove(reportId: string): Promise<void> {
    await rm(this.pathOf(reportId), { force: true });
  }

  /** Ids of the reports in the directory, oldest first; temporary files of interrupted writes are removed. */
  async pending(): Promise<string[]> {
    const found: { id: string; mtimeMs: number }[] = [];
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      if (name.startsWith(TEMP_PREFIX)) {
        await rm(path, { force: true });
        continue;
      }
      const id = name.endsWith(".json") ? name.slice(0, -".json".length) : "";
      if (!ID.test(id)) continue;
      const s = await stat(path).catch(() => undefined);
      if (s?.isFile()) found.push({ id, mtimeMs: s.mtimeMs });
    }
    return found.sort((a, b) => a.mtimeMs - b.mtimeMs || a.id.localeCompare(b.id)).map((f) => f.id);
  }
}
