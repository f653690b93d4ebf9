// The .jsonl records of earlier versions, imported once at first start into the default store.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { CallEvent } from "../../../src/records/call-record.ts";
import { openCallStore } from "../../../src/records/store/open.ts";
import { callEvents } from "../../session/call-events.ts";

const root = mkdtempSync(join(tmpdir(), "vb-import-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const lines = (events: object[]) => events.map((e) => `${JSON.stringify(e)}\n`).join("");
/** The events as those versions wrote them: a call-end with its reason, no outcome. */
const written = (events: CallEvent[]) =>
  events.map((e) => {
    if (e.type !== "call-end") return e;
    const { outcome: _, ...end } = e;
    return end;
  });

describe("importing .jsonl call records", () => {
  it("imports every readable call once, a torn last line left out, the files kept", async () => {
    const calls = join(root, "data", "calls");
    mkdirSync(calls, { recursive: true });
    const whole = callEvents("CA-whole", 2, { at: "2025-06-01T10:00:00.000Z" });
    const torn = callEvents("a84b4c76e66710@pc33.example.com", 1, { at: "2025-06-02T10:00:00.000Z" });
    writeFileSync(join(calls, "CA-whole.jsonl"), lines(written(whole)));
    // Their shutdown's end, which they counted as a hang-up, is read for what it was.
    const stopped = callEvents("CA-stopped", 1, { at: "2025-05-01T10:00:00.000Z" }).map((e) =>
      e.type === "call-end" ? { ...e, reason: "bridge shut down", outcome: "bridge_shutdown" as const } : e,
    );
    writeFileSync(join(calls, "CA-stopped.jsonl"), lines(written(stopped)));
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
      expect((await store.get("CA-stopped"))?.events).toEqual(stopped);
      expect(
        (await store.list({ limit: 10, outcome: "bridge_shutdown" })).calls.map((c) => c.callId),
      ).toEqual(["CA-stopped"]);
      expect((await store.list({ limit: 10, outcome: "caller_hangup" })).calls.map((c) => c.callId)).toEqual([
        "CA-whole",
      ]);
      const cut = await store.get("a84b4c76e66710@pc33.example.com");
      expect(cut?.events).toEqual(torn.slice(0, -1));
      expect(cut?.endedAt).toBeUndefined();
      expect((await store.list({ limit: 10 })).calls.map((c) => c.callId)).toEqual([
        "a84b4c76e66710@pc33.example.com",
        "CA-whole",
        "CA-stopped",
      ]);
    } finally {
      await store.close();
    }
    expect(readdirSync(calls).sort()).toEqual([
      "CA-stopped.jsonl",
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
      expect((await again.list({ limit: 10 })).calls).toHaveLength(3);
    } finally {
      await again.close();
    }
  });
});
