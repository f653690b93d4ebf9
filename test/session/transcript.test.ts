import { describe, expect, it } from "vitest";
import { type CallEvent, TranscriptStore } from "../../src/session/transcript.ts";
import { callEvents } from "./call-events.ts";

describe("TranscriptStore", () => {
  it("passes every event on to its sink, in order, for interleaved calls", () => {
    const seen: Array<[string, CallEvent]> = [];
    const store = new TranscriptStore({ append: (callId, event) => seen.push([callId, event]) });
    const a = callEvents("CA-a", 4);
    const b = callEvents("CA-b", 2);
    for (let i = 0; i < a.length; i++) {
      store.append("CA-a", a[i]!);
      if (b[i]) store.append("CA-b", b[i]!);
    }
    expect(seen.filter(([id]) => id === "CA-a").map(([, e]) => e)).toEqual(a);
    expect(seen.filter(([id]) => id === "CA-b").map(([, e]) => e)).toEqual(b);
    expect(store.get("CA-a")?.turns.map((t) => t.role)).toEqual(Array(4).fill(["user", "assistant"]).flat());
  });

  it("keeps every live call, however many run at once, and bounds only the ended ones", () => {
    const store = new TranscriptStore(undefined, 200);
    const ids = Array.from({ length: 400 }, (_, i) => `CA-load-${i}`);
    const calls = ids.map((id) => callEvents(id, 2));
    // 400 calls at once: each starts, talks, and only then do they end (past the bound of 200).
    for (let step = 0; step < calls[0]!.length; step++) {
      for (const [i, id] of ids.entries()) {
        store.append(id, calls[i]![step]!);
        // As at the end of a call: its report is built from the record at once.
        if (step === calls[0]!.length - 1) expect(store.get(id)?.events).toEqual(calls[i]);
      }
    }
    expect(store.liveCalls).toEqual([]);
    // The 200 that ended last are still in memory; the others are the store's to give.
    expect(ids.filter((id) => store.get(id)).length).toBe(200);
    expect(store.get(ids[399]!)?.events).toEqual(calls[399]);
  });

  it("never forgets a live call for ended ones, and takes back a call id that returns after its end", () => {
    const store = new TranscriptStore(undefined, 2);
    const live = callEvents("CA-live", 1);
    store.append("CA-live", live[0]!);
    for (const id of ["CA-1", "CA-2", "CA-3"]) for (const e of callEvents(id, 1)) store.append(id, e);
    expect(store.get("CA-1")).toBeUndefined();
    expect(store.get("CA-2")?.callId).toBe("CA-2");
    expect(store.liveCalls).toEqual(["CA-live"]);
    for (const e of live.slice(1)) store.append("CA-live", e);
    expect(store.get("CA-live")?.events).toEqual(live);
    expect(store.get("CA-2")).toBeUndefined();
    // A reconnecting stream with the same call id goes on the same record.
    store.append("CA-3", { type: "note", at: live[0]!.at, text: "reconnected" });
    expect(store.liveCalls).toEqual(["CA-3"]);
    expect(store.get("CA-3")?.events.at(-1)).toMatchObject({ type: "note" });
  });
});
