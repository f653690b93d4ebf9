import { describe, expect, it } from "vitest";
import {
  type CallEvent,
  type CallRecord,
  type CallRecordKeeper,
  recordFromEvents,
  TranscriptStore,
} from "../../src/records/call-record.ts";
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

  describe("with a keeper (the call store) behind it", () => {
    /** The store's contract in memory: every event kept, the barrier answered after a turn of the loop. */
    class MemoryKeeper implements CallRecordKeeper {
      readonly events = new Map<string, CallEvent[]>();
      refused = new Set<string>();
      append(callId: string, event: CallEvent): void {
        if (this.refused.has(callId)) return;
        this.events.set(callId, [...(this.events.get(callId) ?? []), event]);
      }
      async written(callId: string): Promise<boolean> {
        await new Promise((r) => setImmediate(r));
        return !this.refused.has(callId);
      }
      async get(callId: string): Promise<CallRecord | undefined> {
        return recordFromEvents(this.events.get(callId) ?? []);
      }
    }
    const settle = () => new Promise((r) => setImmediate(r)).then(() => new Promise((r) => setImmediate(r)));
    const dial: CallEvent = { type: "dial", at: "2025-01-01T00:00:00.000Z", outcome: "human" };

    it("keeps a long call's call-start, dial and latest events, and measures what that saves", async () => {
      const keeper = new MemoryKeeper();
      const store = new TranscriptStore(keeper, 200, 100);
      const [start, ...rest] = callEvents("CA-hour", 600);
      const talk = [start!, dial, ...rest.slice(0, -1)];
      let most = 0;
      for (const e of talk) {
        store.append("CA-hour", e);
        most = Math.max(most, store.held("CA-hour"));
        await settle();
      }
      expect(most).toBeLessThanOrEqual(152);
      const recent = store.recent("CA-hour");
      expect(recent.slice(0, 2)).toEqual([start, dial]);
      expect(recent.at(-1)).toEqual(talk.at(-1));
      expect(store.get("CA-hour")).toBeUndefined();
      expect((await store.read("CA-hour"))?.events).toEqual(talk);
      expect((await store.read("CA-hour"))?.dialOutcome).toBe("human");
      // Per call after 600 turns: the events memory holds, as JSON (a proxy for heap bytes).
      const bytes = (events: CallEvent[]) => JSON.stringify(events).length;
      const memoryOnly = new TranscriptStore(undefined);
      for (const e of talk) memoryOnly.append("CA-hour", e);
      expect(bytes(memoryOnly.recent("CA-hour"))).toBeGreaterThan(8 * bytes(recent));
      console.log(
        `retained per call after 600 turns: ${memoryOnly.held("CA-hour")} events, ${bytes(memoryOnly.recent("CA-hour"))} B without a store; ` +
          `${store.held("CA-hour")} events, ${bytes(recent)} B with one`,
      );
    });

    it("keeps every event of a call whose write the store refused", async () => {
      const keeper = new MemoryKeeper();
      keeper.refused.add("CA-hole");
      const store = new TranscriptStore(keeper, 200, 10);
      const events = callEvents("CA-hole", 50);
      for (const e of events.slice(0, -1)) {
        store.append("CA-hole", e);
        await settle();
      }
      expect(store.held("CA-hole")).toBe(events.length - 1);
      store.append("CA-hole", events.at(-1)!);
      expect(store.get("CA-hole")?.events).toEqual(events);
      expect((await store.read("CA-hole"))?.events).toEqual(events);
    });

    it("lets go only of what the barrier covered, and a short call stays whole", async () => {
      const keeper = new MemoryKeeper();
      const store = new TranscriptStore(keeper, 200, 10);
      const short = callEvents("CA-short", 3);
      for (const e of short) store.append("CA-short", e);
      await settle();
      expect(store.get("CA-short")?.events).toEqual(short);
      // No turn of the loop between the appends: no barrier answers, nothing is let go of.
      const long = callEvents("CA-burst", 40);
      for (const e of long) store.append("CA-burst", e);
      expect(store.held("CA-burst")).toBe(long.length);
      await new Promise((r) => setImmediate(r));
      // The one barrier asked for (at 15 events) covered those 15 (the call-start stays pinned).
      expect(store.held("CA-burst")).toBe(long.length - 15 + 1);
      // The next barrier, asked for at once, covers the rest: down to the latest 10.
      await settle();
      expect(store.held("CA-burst")).toBe(10 + 1);
      expect((await store.read("CA-burst"))?.events).toEqual(long);
    });
  });
});
