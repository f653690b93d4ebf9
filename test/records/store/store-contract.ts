// What every engine of the call store must do, run against each engine by its own test file.
import { expect, it } from "vitest";
import { runAnalysis } from "../../../app/bridge/call-analysis.ts";
import { BridgeMetrics } from "../../../app/metrics/bridge-metrics.ts";
import type { CallAgent } from "../../../src/agents/call-agent.ts";
import type { SvcClient } from "../../../src/api/client.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { LIVE_TAIL, TranscriptStore } from "../../../src/records/call-record.ts";
import { callReport } from "../../../src/records/reports/report.ts";
import type { CallStore } from "../../../src/records/store/call-store.ts";
import { callEvents } from "../../session/call-events.ts";

export interface Engine {
  /** A fresh, empty store; `instance` names the bridge. */
  open(instance?: string): Promise<CallStore>;
}

/**
 * Calls as versions before the typed outcome filed them: the outcome column read from the reason
 * (their shutdown counted as a hang-up), the call-end event with no outcome of its own. Each engine's
 * test writes them its own way, opens the store and checks them with expectEarlierCallsRead.
 */
export const EARLIER_AT = "2026-01-02T09:00:00.000Z";
export const EARLIER_CALLS = [
  { callId: "CA-stopped", reason: "bridge shut down", outcome: "caller_hangup" },
  { callId: "CA-done", reason: "agent: caller said goodbye", outcome: "agent_hangup" },
].map((c) => ({
  ...c,
  events: [
    { type: "call-start", at: EARLIER_AT, callId: c.callId, transport: "sip" },
    { type: "call-end", at: EARLIER_AT, reason: c.reason, durationMs: 1000 },
  ],
}));

/** The earlier calls as a store of now gives them back: the shutdown's re-filed, every call-end with its outcome. */
export async function expectEarlierCallsRead(store: CallStore): Promise<void> {
  const outcomes = (await store.list({ limit: 10 })).calls.map((c) => [c.callId, c.outcome]);
  expect(outcomes.sort()).toEqual([
    ["CA-done", "agent_hangup"],
    ["CA-stopped", "bridge_shutdown"],
  ]);
  expect((await store.get("CA-stopped"))?.events.at(-1)).toEqual({
    type: "call-end",
    at: EARLIER_AT,
    reason: "bridge shut down",
    outcome: "bridge_shutdown",
    durationMs: 1000,
  });
  expect((await store.get("CA-done"))?.events.at(-1)).toMatchObject({ outcome: "agent_hangup" });
}

const minute = (m: number) => new Date(Date.UTC(2026, 2, 1, 9, m)).toISOString();

export function storeContract(engine: Engine): void {
  it("holds a long live call's latest events in memory, and gives back every turn from the store", async () => {
    const store = await engine.open();
    try {
      const transcripts = new TranscriptStore(store);
      const turns = 4 * LIVE_TAIL;
      const events = callEvents("CA-long", turns, { words: (i) => [`question ${i}`, `answer ${i}`] });
      const talk = events.slice(0, -1);
      // The bound: the latest 1.5 × LIVE_TAIL events (let go of in batches), one turn's two events
      // appended while the barrier is answered, and the call-start.
      const bound = LIVE_TAIL * 1.5 + 2 + 1;
      let most = 0;
      for (let i = 0; i < talk.length; i++) {
        transcripts.append("CA-long", talk[i]!);
        most = Math.max(most, transcripts.held("CA-long"));
        // A turn's two events, then the call loop goes on while the store writes them.
        if (i % 2 === 0) {
          await store.flush();
          await new Promise((r) => setImmediate(r));
        }
      }
      expect(most).toBeLessThanOrEqual(bound);
      expect(most).toBeGreaterThan(LIVE_TAIL);
      expect(transcripts.get("CA-long")).toBeUndefined();
      // The console joining mid-call: the call-start, then the latest events.
      const recent = transcripts.recent("CA-long");
      expect(recent[0]).toEqual(talk[0]);
      expect(recent.at(-1)).toEqual(talk.at(-1));
      // GET /calls/:id of the live call: every turn so far.
      const live = await transcripts.read("CA-long");
      expect(live?.events).toEqual(talk);
      expect(live?.turns).toHaveLength(2 * turns);
      expect(live?.endedAt).toBeUndefined();
      // At the end: the report and the analysis read the whole record (no flush first).
      transcripts.append("CA-long", events.at(-1)!);
      const ended = await transcripts.read("CA-long");
      expect(ended?.events).toEqual(events);
      expect(ended?.turns.map((t) => t.text)).toEqual(
        talk.slice(1).map((e) => (e.type === "user" ? e.text : e.type === "assistant" ? e.heard : "")),
      );
      const report = ended && callReport(ended, { instance: "bridge-test" });
      expect(report?.turns).toHaveLength(2 * turns);
      expect(report?.endReason).toBe("caller hung up");
      // The analysis asks the model about every turn (its input), then joins the record.
      let transcript = "";
      const client = {
        chat: {
          create: async (body: { messages: { content: string }[] }) => {
            transcript = body.messages[1]!.content;
            return { choices: [{ message: { content: '{"summary":"a long call","fields":{}}' } }] };
          },
        },
      } as unknown as SvcClient;
      const agent = {
        name: "default",
        models: { chatModel: "chat" },
        analysis: { summary: true, fields: {} },
      } as unknown as CallAgent;
      const metrics = new BridgeMetrics({ defaultMetrics: false });
      await runAnalysis(agent, "CA-long", { client, transcripts, metrics, log: silentLogger });
      expect(transcript.split("\n")).toEqual(
        Array.from({ length: turns }, (_, i) => [`Caller: question ${i}`, `Agent: answer ${i}`]).flat(),
      );
      expect((await transcripts.read("CA-long"))?.analysis).toEqual({
        status: "done",
        summary: "a long call",
        fields: {},
      });
    } finally {
      await store.close();
    }
  });

  it("answers the write barrier once everything appended before it is written", async () => {
    const store = await engine.open();
    try {
      const events = callEvents("CA-barrier", 3);
      for (const e of events) store.append("CA-barrier", e);
      const barrier = store.written("CA-barrier");
      store.append("CA-other", callEvents("CA-other", 1)[0]!);
      expect(await barrier).toBe(true);
      expect((await store.get("CA-barrier"))?.events).toEqual(events);
      // Told for each call: another call's barrier says the same of its own events.
      expect(await store.written("CA-other")).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("keeps every call's record whole with 400 calls at once, and lists them all newest first", async () => {
    const store = await engine.open();
    try {
      const ids = Array.from({ length: 400 }, (_, i) => `CA-${String(i).padStart(3, "0")}`);
      const calls = ids.map((id, i) => callEvents(id, 2, { at: minute(i % 60) }));
      for (let step = 0; step < calls[0]!.length; step++)
        for (const [i, id] of ids.entries()) store.append(id, calls[i]![step]!);
      await store.flush();
      for (const [i, id] of ids.entries()) {
        const record = await store.get(id);
        expect(record?.events).toEqual(calls[i]);
        expect(record?.turns).toHaveLength(4);
      }
      const seen: string[] = [];
      let after: Awaited<ReturnType<CallStore["list"]>>["next"];
      do {
        const page = await store.list({ limit: 100, ...(after ? { after } : {}) });
        seen.push(...page.calls.map((c) => c.callId));
        after = page.next;
      } while (after);
      expect(seen).toHaveLength(400);
      expect(new Set(seen).size).toBe(400);
      const first = await store.list({ limit: 1 });
      expect(first.calls[0]).toMatchObject({
        callId: "CA-359", // the last of those that started at minute 59
        startedAt: minute(59),
        outcome: "caller_hangup",
        endReason: "caller hung up",
        turns: 4,
        durationMs: 1234,
        transport: "twilio",
        direction: "inbound",
      });
    } finally {
      await store.close();
    }
  });

  it("filters by number, transport, outcome, time and words said, with cursor paging", async () => {
    const store = await engine.open();
    try {
      const add = (id: string, m: number, opts: Parameters<typeof callEvents>[2], live = false) => {
        const events = callEvents(id, 1, { at: minute(m), ...opts });
        for (const e of live ? events.slice(0, -1) : events) store.append(id, e);
      };
      add("CA-bike", 1, {
        from: "+15550101",
        words: () => ["my bicycle has a flat tyre", "we repair bicycles"],
      });
      add("CA-hours", 2, { from: "+15550202", words: () => ["when are you open", "nine to five"] });
      add("SIP-1", 3, { from: "+15550101", transport: "sip", words: () => ["a bicycle bell", "in stock"] });
      add("CA-live", 4, { from: "+15550303", words: () => ["still talking", "yes"] }, true);
      await store.flush();
      const ids = async (q: Parameters<CallStore["list"]>[0]) =>
        (await store.list(q)).calls.map((c) => c.callId);
      expect(await ids({ limit: 10 })).toEqual(["CA-live", "SIP-1", "CA-hours", "CA-bike"]);
      expect(await ids({ limit: 10, from: "+15550101" })).toEqual(["SIP-1", "CA-bike"]);
      expect(await ids({ limit: 10, transport: "sip" })).toEqual(["SIP-1"]);
      expect(await ids({ limit: 10, outcome: "live" })).toEqual(["CA-live"]);
      expect(await ids({ limit: 10, outcome: "ended" })).toEqual(["SIP-1", "CA-hours", "CA-bike"]);
      expect(await ids({ limit: 10, outcome: "caller_hangup" })).toEqual(["SIP-1", "CA-hours", "CA-bike"]);
      expect(await ids({ limit: 10, since: minute(2), until: minute(4) })).toEqual(["SIP-1", "CA-hours"]);
      // Words of either side, all of them; whole words as the engine's tokenizer sees them.
      expect(await ids({ limit: 10, q: ["bicycle"] })).toEqual(["SIP-1", "CA-bike"]);
      expect(await ids({ limit: 10, q: ["bicycle", "flat"] })).toEqual(["CA-bike"]);
      // All the words, each said anywhere in the call, by either side.
      expect(await ids({ limit: 10, q: ["open", "five"] })).toEqual(["CA-hours"]);
      expect(await ids({ limit: 10, q: ["bicycle", "five"] })).toEqual([]);
      expect(await ids({ limit: 10, q: ["five"] })).toEqual(["CA-hours"]);
      expect(await ids({ limit: 10, q: ["nothing"] })).toEqual([]);
      expect(await ids({ limit: 10, agent: "sales" })).toEqual([]);
      store.append("CA-sales", {
        type: "call-start",
        at: minute(9),
        callId: "CA-sales",
        transport: "sip",
        agent: "sales",
      });
      await store.flush();
      expect(await ids({ limit: 10, agent: "sales" })).toEqual(["CA-sales"]);
      expect((await store.list({ limit: 1 })).calls[0]).toMatchObject({ callId: "CA-sales", agent: "sales" });
      const page1 = await store.list({ limit: 1, from: "+15550101" });
      expect(page1.next).toEqual({ startedAt: minute(3), callId: "SIP-1" });
      const page2 = await store.list({ limit: 1, from: "+15550101", after: page1.next! });
      expect(page2.calls.map((c) => c.callId)).toEqual(["CA-bike"]);
      expect(page2.next).toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it("keeps where a call was recorded, the delivery of its report, and imports a call once", async () => {
    const store = await engine.open("bridge-a");
    try {
      const events = callEvents("CA-rec", 1, { at: minute(5) });
      for (const e of events) store.append("CA-rec", e);
      store.setRecording("CA-rec", "/var/calls/CA-rec.wav");
      store.setReport("r-1", "pending", undefined, "CA-rec");
      store.setReport("r-1", "delivered", 200);
      await store.flush();
      const record = await store.get("CA-rec");
      expect(record).toMatchObject({
        instance: "bridge-a",
        recording: { instance: "bridge-a", path: "/var/calls/CA-rec.wav" },
      });
      expect((await store.list({ limit: 1 })).calls[0]).toMatchObject({
        instance: "bridge-a",
        recording: { path: "/var/calls/CA-rec.wav" },
      });
      expect(await store.importCall(events)).toBe(false);
      const old = callEvents("CA-old", 1, { at: minute(0) });
      expect(await store.importCall(old)).toBe(true);
      expect((await store.get("CA-old"))?.events).toEqual(old);
      expect(await store.meta("k")).toBeUndefined();
      await store.setMeta("k", "v");
      expect(await store.meta("k")).toBe("v");
    } finally {
      await store.close();
    }
  });

  it("keeps an outbound call's direction, dial outcome and AMD, and filters by direction", async () => {
    const store = await engine.open("bridge-a");
    try {
      const at = (m: number) => `2026-05-01T10:0${m}:00.000Z`;
      store.append("out-1", {
        type: "call-start",
        at: at(0),
        callId: "out-1",
        transport: "sip",
        to: "+15550101",
        direction: "outbound",
      });
      store.append("out-1", {
        type: "dial",
        at: at(1),
        outcome: "machine",
        amd: { result: "machine", decidedAfterMs: 2400, beepEndedAtMs: 6100 },
      });
      store.append("out-1", {
        type: "call-end",
        at: at(2),
        reason: "agent: left a voicemail message",
        outcome: "agent_hangup",
        durationMs: 9000,
      });
      store.append("out-2", {
        type: "call-start",
        at: at(3),
        callId: "out-2",
        transport: "sip",
        to: "+15550102",
        direction: "outbound",
      });
      store.append("out-2", { type: "dial", at: at(4), outcome: "busy", reason: "486 Busy Here" });
      store.append("out-2", {
        type: "call-end",
        at: at(4),
        reason: "unanswered: busy (486 Busy Here)",
        outcome: "unanswered",
        durationMs: 300,
      });
      store.append("in-1", { type: "call-start", at: at(5), callId: "in-1", transport: "sip" });
      await store.flush();
      expect(await store.get("out-1")).toMatchObject({
        direction: "outbound",
        dialOutcome: "machine",
        amd: { result: "machine", decidedAfterMs: 2400, beepEndedAtMs: 6100 },
      });
      expect(await store.get("in-1")).toMatchObject({ direction: "inbound" });
      const outbound = await store.list({ limit: 10, direction: "outbound" });
      expect(outbound.calls.map((c) => [c.callId, c.dialOutcome, c.outcome])).toEqual([
        ["out-2", "busy", "unanswered"],
        ["out-1", "machine", "agent_hangup"],
      ]);
      expect(outbound.calls[0]).toMatchObject({ direction: "outbound", dialReason: "486 Busy Here" });
      expect((await store.list({ limit: 10, direction: "inbound" })).calls.map((c) => c.callId)).toEqual([
        "in-1",
      ]);
    } finally {
      await store.close();
    }
  });
}
