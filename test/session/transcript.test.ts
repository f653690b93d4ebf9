import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type CallEvent, TranscriptStore } from "../../src/session/transcript.ts";

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "transcript-test-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const at = "2025-01-01T00:00:00.000Z";
function callEvents(callId: string, turns: number): CallEvent[] {
  const events: CallEvent[] = [{ type: "call-start", at, callId, transport: "twilio", from: "+15550001" }];
  for (let i = 0; i < turns; i++) {
    events.push({ type: "user", at, text: `question ${i}`, source: "speech" });
    events.push({
      type: "assistant",
      at,
      generated: `answer ${i}`,
      heard: `answer ${i}`,
      interrupted: false,
      toolCalls: [],
      metrics: { voiceToVoiceMs: 600 + i },
    });
  }
  events.push({ type: "call-end", at, reason: "caller hung up", durationMs: 1234 });
  return events;
}

describe("TranscriptStore on disk", () => {
  it("writes every event as one JSON line, in order, for interleaved calls", async () => {
    const dir = tempDir();
    const store = new TranscriptStore(dir);
    const a = callEvents("CA-a", 40);
    const b = callEvents("CA-b", 25);
    // Interleaved and in one synchronous burst: most lines are added while a write is in flight.
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (a[i]) store.append("CA-a", a[i]!);
      if (b[i]) store.append("CA-b", b[i]!);
    }
    await store.flush();
    for (const [id, events] of [
      ["CA-a", a],
      ["CA-b", b],
    ] as const) {
      const lines = readFileSync(join(dir, `${id}.jsonl`), "utf8").split("\n");
      expect(lines.pop()).toBe("");
      expect(lines.map((l) => JSON.parse(l))).toEqual(events);
    }
  });

  it("keeps appending to the same file across writes, and a new store reads the record back", async () => {
    const dir = tempDir();
    const store = new TranscriptStore(dir);
    const events = callEvents("CA-c", 3);
    for (const e of events) {
      store.append("CA-c", e);
      await store.flush();
    }
    const fresh = new TranscriptStore(dir);
    const record = fresh.get("CA-c");
    expect(record?.events).toEqual(events);
    expect(record?.turns.map((t) => t.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(record?.endReason).toBe("caller hung up");
  });

  it("reads back a call whose id is not file-name safe (a SIP Call-ID), and not another id sharing its file name", async () => {
    const dir = tempDir();
    const store = new TranscriptStore(dir, 1);
    const id = "a84b4c76e66710@pc33.example.com";
    for (const e of callEvents(id, 1)) store.append(id, e);
    for (const e of callEvents("CA-later", 1)) store.append("CA-later", e);
    await store.flush();
    const fresh = new TranscriptStore(dir);
    expect(fresh.get(id)?.callId).toBe(id);
    expect(fresh.get("a84b4c76e66710_pc33.example.com")).toBeUndefined();
    expect(fresh.get("../etc/passwd")).toBeUndefined();
  });

  it("reports a failed write and keeps the record in memory", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "CA-d.jsonl")); // a directory where the file should go: open() fails
    const errors: Array<{ callId: string; code: unknown }> = [];
    const store = new TranscriptStore(dir, 200, (err, callId) =>
      errors.push({ callId, code: (err as NodeJS.ErrnoException).code }),
    );
    const events = callEvents("CA-d", 1);
    for (const e of events) store.append("CA-d", e);
    await store.flush();
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0]).toEqual({ callId: "CA-d", code: "EISDIR" });
    expect(store.get("CA-d")?.events).toEqual(events);
  });

  it("without a directory keeps records in memory only", async () => {
    const store = new TranscriptStore(undefined);
    const events = callEvents("CA-e", 2);
    for (const e of events) store.append("CA-e", e);
    await store.flush();
    expect(store.get("CA-e")?.turns).toHaveLength(4);
  });
});

describe("TranscriptStore under load", () => {
  it("keeps every live call, however many run at once, and bounds only the ended ones", async () => {
    const dir = tempDir();
    const store = new TranscriptStore(dir, 200);
    const ids = Array.from({ length: 400 }, (_, i) => `CA-load-${i}`);
    const calls = ids.map((id) => callEvents(id, 2));
    // 400 calls at once: each starts, talks, and only then do they end (past the old bound of 200).
    for (let step = 0; step < calls[0]!.length; step++) {
      for (const [i, id] of ids.entries()) {
        store.append(id, calls[i]![step]!);
        if (step === calls[0]!.length - 1) {
          // As at the end of a call: the report is built from the record at once.
          expect(store.get(id)?.events).toEqual(calls[i]);
        }
      }
    }
    await store.flush();
    for (const [i, id] of ids.entries()) expect(store.get(id)?.events).toEqual(calls[i]);
    const fresh = new TranscriptStore(dir, 200);
    for (const [i, id] of ids.entries()) expect(fresh.get(id)?.events).toEqual(calls[i]);
  });

  it("in memory only, forgets the oldest ended calls beyond the bound, never a live one", () => {
    const store = new TranscriptStore(undefined, 2);
    const live = callEvents("CA-live", 1);
    store.append("CA-live", live[0]!);
    for (const id of ["CA-1", "CA-2", "CA-3"]) for (const e of callEvents(id, 1)) store.append(id, e);
    expect(store.get("CA-1")).toBeUndefined();
    expect(store.get("CA-2")?.callId).toBe("CA-2");
    for (const e of live.slice(1)) store.append("CA-live", e);
    expect(store.get("CA-live")?.events).toEqual(live);
    // Its end made it the newest ended call: CA-2 is forgotten now.
    expect(store.get("CA-2")).toBeUndefined();
    expect(store.list(10).calls.map((c) => c.callId)).toEqual(["CA-live", "CA-3"]);
  });
});
