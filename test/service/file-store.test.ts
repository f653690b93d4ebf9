// The file store on its own: the per-account count limit, and the start-up sweep that drops
// leftovers of interrupted uploads and blobs no row acknowledges.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { accountIdOf } from "../../src/service/auth.ts";
import { ApiError } from "../../src/service/errors.ts";
import { openDatabase } from "../../src/service/store/db.ts";
import { FileStore } from "../../src/service/store/files.ts";
import { media } from "./helpers/media.ts";

const log = pino({ level: "silent" });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function* once(bytes: Buffer) {
  yield bytes;
}

describe("FileStore", () => {
  it("holds at most maxFilesPerAccount files per account, counted per account", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-store-"));
    dirs.push(dir);
    const db = openDatabase(dir);
    const store = new FileStore(db, dir, log, { maxFilesPerAccount: 2 });
    const a = accountIdOf("a");
    const b = accountIdOf("b");
    const png = readFileSync(media.png());
    for (let i = 0; i < 2; i++)
      await store.commit(a, await store.stage(once(png)), { filename: "p", purpose: "storage" });
    const third = await store.stage(once(png));
    const err = await store.commit(a, third, { filename: "p", purpose: "storage" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe("file_limit_reached");
    expect(existsSync(third.tmpPath)).toBe(false);
    expect(store.count(a)).toBe(2);
    await store.commit(b, await store.stage(once(png)), { filename: "p", purpose: "storage" });
    expect(store.count(b)).toBe(1);
    db.close();
  });

  it("sweeps temp files and unacknowledged blobs at start-up, keeping stored files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-sweep-"));
    dirs.push(dir);
    let db = openDatabase(dir);
    let store = new FileStore(db, dir, log);
    const a = accountIdOf("a");
    const kept = await store.commit(a, await store.stage(once(readFileSync(media.png()))), {
      filename: "k.png",
      purpose: "storage",
    });
    db.close();
    writeFileSync(join(dir, "tmp", "uploads", "dead.part"), "partial");
    mkdirSync(join(dir, "files", a), { recursive: true });
    writeFileSync(join(dir, "files", a, "file-000000000000000000000000"), "orphan");
    db = openDatabase(dir);
    store = new FileStore(db, dir, log);
    expect(existsSync(join(dir, "tmp", "uploads", "dead.part"))).toBe(false);
    expect(existsSync(join(dir, "files", a, "file-000000000000000000000000"))).toBe(false);
    expect(store.get(a, kept.id)).toEqual(kept);
    expect(await store.sizeOnDisk(kept)).toBe(kept.bytes);
    db.close();
  });
});
