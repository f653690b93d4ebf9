// The .jsonl records of earlier versions, imported once at first start into the default store.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { silentLogger } from "../../src/core/log.ts";
import { openCallStore } from "../../src/records/store/open.ts";
import { callEvents } from "../session/call-events.ts";

const root = mkdtempSync(join(tmpdir(), "vb-import-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const lines = (events: object[]) => events.map((e) => `${JSON.stringify(e)}\n`).join("");

describe("importing .jsonl call records", () => {
  it("imports every readable call once, a torn last line left out, the files kept", async () => {
    const calls = join(root, "data", "calls");
    mkdirSync(calls, { recursive: true });
    const whole = callEvents("CA-whole", 2, { at: "2025-06-01T10:00:00.000Z" });
    const torn = callEvents("a84b4c76e66710@pc33.example.com", 1, { at: "2025-06-02T10:00:00.000Z" });
    writeFileSync(join(calls, "CA-whole.jsonl"), lines(whole));
    // A crash in the middle of the call-end line: the call is kept as far as it got.
    writeFileSync(
      join(calls, "a84b4c76e66710_pc33.example.com.jsonl"),
      `${lines(torn.slice(0, -1))}{"type":"call-e`,
    );
    writeFileSync(join(calls, "broken.jsonl"), "not json\n");
    writeFileSync(join(calls, "notes.txt"), "not a record\n");
    const config = loadConfig({ env: { SVC_LOCAL_DATA_DIR: join(root, "data") } });

    const store = await openCallStore(config, silentLogger);
    try {
      expect((await store.get("CA-whole"))?.events).toEqual(whole);
      const cut = await store.get("a84b4c76e66710@pc33.example.com");
      expect(cut?.events).toEqual(torn.slice(0, -1));
      expect(cut?.endedAt).toBeUndefined();
      expect((await store.list({ limit: 10 })).calls.map((c) => c.callId)).toEqual([
        "a84b4c76e66710@pc33.example.com",
        "CA-whole",
      ]);
    } finally {
      await store.close();
    }
    expect(readdirSync(calls).sort()).toEqual([
      "CA-whole.jsonl",
      "a84b4c76e66710_pc33.example.com.jsonl",
      "broken.jsonl",
      "notes.txt",
    ]);

    // A file that appears later is not imported again at the next start: the directory was done.
    writeFileSync(join(calls, "CA-late.jsonl"), lines(callEvents("CA-late", 1)));
    const again = await openCallStore(config, silentLogger);
    try {
      expect(await again.get("CA-late")).toBeUndefined();
      expect((await again.list({ limit: 10 })).calls).toHaveLength(2);
    } finally {
      await again.close();
    }
  });
});
