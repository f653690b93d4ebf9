// The scheduler on virtual time over the real SQLite store: the pace held, the concurrency cap,
// retries by outcome, a 429 backed off, calling hours on the callee's clock, a restart resuming,
// a lease that runs out. Calls are "placed" by a recorder that answers as POST /calls would; each
// call's end is told to the scheduler as the bridge's record observer would.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Campaign, campaignSettingsSchema } from "../../src/campaigns/campaign.ts";
import { CampaignScheduler } from "../../src/campaigns/scheduler.ts";
import { CampaignStore } from "../../src/campaigns/store.ts";
import { SqliteCampaignEngine } from "../../src/campaigns/store-sqlite.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import type { PlaceResult } from "../../src/outbound/calls.ts";
import type { DialBody } from "../../src/outbound/request.ts";

const log = pino({ level: "silent" });
// Wednesday 2025-01-15 10:00 UTC.
const BASE = Date.parse("2025-01-15T10:00:00Z");
const ALWAYS = { days: "mon-sun", from: "00:00", to: "24:00" };

let dir: string;
let clock: VirtualClock;
let stores: CampaignStore[];
const now = () => BASE + clock.now();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "campaign-sched-"));
  clock = new VirtualClock();
  stores = [];
});
afterEach(async () => {
  for (const s of stores) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function openStore(): Promise<CampaignStore> {
  const s = new CampaignStore(await SqliteCampaignEngine.open(join(dir, "voice-bridge.db")));
  stores.push(s);
  return s;
}

interface Dialled {
  callId: string;
  to: string;
  at: number;
}

function harness(
  store: CampaignStore,
  o: { instance?: string; place?: (b: DialBody) => PlaceResult; leaseMs?: number } = {},
) {
  const dialled: Dialled[] = [];
  let n = 0;
  const scheduler = new CampaignScheduler({
    store,
    instance: o.instance ?? "a",
    clock,
    now,
    leaseMs: o.leaseMs ?? 30_000,
    place:
      o.place ??
      ((b) => {
        // The bridge's do-not-call list, as the outbound path answers for it.
        if (b.to === "+15559999")
          return { ok: false, status: 403, field: "to", message: "on the do-not-call list" };
        const callId = `out-${o.instance ?? "a"}-${++n}`;
        dialled.push({ callId, to: b.to, at: clock.now() });
        return { ok: true, callId };
      }),
    cancelCall: () => {},
    headroom: () => 1000,
    log,
    pollMs: 1000,
  });
  return { scheduler, dialled };
}

/** Advances the clock `ms` in steps, each scheduler (bridge) settling its tick in turn. */
async function run(
  scheduler: CampaignScheduler | CampaignScheduler[],
  ms: number,
  step = 100,
): Promise<void> {
  const all = Array.isArray(scheduler) ? scheduler : [scheduler];
  for (let t = 0; t < ms; t += step) {
    clock.advance(step);
    for (const s of all) await s.settled();
  }
}

async function campaign(
  store: CampaignStore,
  rows: number,
  settings: Record<string, unknown>,
): Promise<Campaign> {
  const c: Campaign = {
    id: `cmp-${Math.random().toString(16).slice(2)}`,
    name: "test",
    status: "running",
    settings: campaignSettingsSchema.parse({ callingHours: ALWAYS, ...settings }),
    createdAt: new Date(now()).toISOString(),
  };
  const list = Array.from({ length: rows }, (_, i) => ({
    number: `+1555${String(i).padStart(4, "0")}`,
    variables: { i: String(i) },
    line: i + 2,
  }));
  await store.create(c, list, now());
  return c;
}

describe("the campaign scheduler", () => {
  it("holds the pace: 60 calls a minute start one a second, never more than the bucket allows", async () => {
    const store = await openStore();
    await campaign(store, 300, { pacePerMinute: 60, concurrency: 100 });
    const { scheduler, dialled } = harness(store);
    await scheduler.start();
    await run(scheduler, 60_000);
    await scheduler.stop();
    // One at once, then one a second: 61 in the first 60 s (the bucket holds two seconds' worth at most).
    expect(dialled.length).toBeGreaterThanOrEqual(60);
    expect(dialled.length).toBeLessThanOrEqual(62);
    const gaps = dialled.slice(1).map((d, i) => d.at - dialled[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(900);
    expect(new Set(dialled.map((d) => d.to)).size).toBe(dialled.length);
  });

  it("keeps to the concurrency cap, and a call's end frees a place", async () => {
    const store = await openStore();
    const c = await campaign(store, 10, { pacePerMinute: 6000, concurrency: 3 });
    const { scheduler, dialled } = harness(store);
    await scheduler.start();
    await run(scheduler, 5000);
    expect(dialled.length).toBe(3);
    scheduler.callEnded(dialled[0]!.callId, "answered", "caller hung up");
    await run(scheduler, 1000);
    expect(dialled.length).toBe(4);
    expect((await store.get(c.id))?.counts.byStatus).toEqual({ done: 1, dialing: 3, pending: 6 });
    await scheduler.stop();
  });

  it("retries busy after its delay, up to its attempts; files every attempt with its call", async () => {
    const store = await openStore();
    const c = await campaign(store, 1, { pacePerMinute: 6000, retry: { busy: { attempts: 3, delayS: 10 } } });
    const { scheduler, dialled } = harness(store);
    await scheduler.start();
    for (let attempt = 1; attempt <= 3; attempt++) {
      await run(scheduler, 500);
      expect(dialled.length).toBe(attempt);
      scheduler.callEnded(dialled.at(-1)!.callId, "busy", "486 Busy Here");
      await scheduler.settled();
      await run(scheduler, 9000);
      expect(dialled.length).toBe(attempt);
      await run(scheduler, 1500);
    }
    await run(scheduler, 20_000);
    expect(dialled.length).toBe(3);
    const [row] = await store.results(c.id);
    expect(row).toMatchObject({
      status: "done",
      outcome: "busy",
      attempts: 3,
      callIds: dialled.map((d) => d.callId),
    });
    expect((await store.get(c.id))?.status).toBe("completed");
    await scheduler.stop();
  });

  it("backs off a 429 for its Retry-After, the attempt unmade", async () => {
    const store = await openStore();
    const c = await campaign(store, 2, { pacePerMinute: 6000 });
    let refuse = true;
    const tries: number[] = [];
    const { scheduler } = harness(store, {
      place: () => {
        tries.push(clock.now());
        if (refuse) return { ok: false, status: 429, message: "too many", retryAfterS: 3 };
        return { ok: true, callId: `out-${tries.length}` };
      },
    });
    await scheduler.start();
    await run(scheduler, 2900);
    expect(tries.length).toBe(1);
    refuse = false;
    await run(scheduler, 500);
    expect(tries.length).toBe(3);
    const rows = await store.results(c.id);
    expect(rows.map((r) => r.attempts)).toEqual([1, 1]);
    await scheduler.stop();
  });

  it("calls each row within its own calling hours, and never a do-not-call number", async () => {
    const store = await openStore();
    const c: Campaign = {
      id: "cmp-hours",
      name: "hours",
      status: "running",
      settings: campaignSettingsSchema.parse({
        pacePerMinute: 6000,
        timeZone: "UTC",
        callingHours: { days: "mon-fri", from: "09:00", to: "17:00" },
      }),
      createdAt: new Date(now()).toISOString(),
    };
    // 10:00 UTC: 11:00 in Paris (open), 05:00 in New York (closed until 14:00 UTC), 19:00 in Tokyo (closed).
    await store.create(
      c,
      [
        { number: "+15550001", variables: {}, timeZone: "Europe/Paris", line: 2 },
        { number: "+15550002", variables: {}, timeZone: "America/New_York", line: 3 },
        { number: "+15550003", variables: {}, timeZone: "Asia/Tokyo", line: 4 },
        { number: "+15550004", variables: {}, line: 5 },
        { number: "+15559999", variables: {}, line: 6 },
      ],
      now(),
    );
    // Hours go by in steps of a minute here: a lease as long keeps the calls in progress held.
    const { scheduler, dialled } = harness(store, { leaseMs: 24 * 3600_000 });
    await scheduler.start();
    await run(scheduler, 2000);
    expect(dialled.map((d) => d.to).sort()).toEqual(["+15550001", "+15550004"]);
    // Four hours on (14:00 UTC): New York opens.
    await run(scheduler, 4 * 3600_000 - 2000, 60_000);
    await run(scheduler, 2000);
    expect(dialled.map((d) => d.to).sort()).toEqual(["+15550001", "+15550002", "+15550004"]);
    const rows = await store.results(c.id);
    expect(rows.find((r) => r.number === "+15559999")).toMatchObject({
      status: "skipped",
      outcome: "do-not-call",
      attempts: 1,
    });
    expect(rows.find((r) => r.number === "+15550003")).toMatchObject({ status: "pending", attempts: 0 });
    await scheduler.stop();
  });

  it("resumes after a restart: the rows it was dialling are filed as lost and called again", async () => {
    const store = await openStore();
    const c = await campaign(store, 3, { pacePerMinute: 6000 });
    const first = harness(store);
    await first.scheduler.start();
    await run(first.scheduler, 500);
    expect(first.dialled.length).toBe(3);
    first.scheduler.callEnded(first.dialled[0]!.callId, "answered", "done");
    await first.scheduler.stop();
    await first.scheduler.settled();
    await store.close();
    stores = [];
    // The same bridge starts again on the same database.
    const again = await openStore();
    const second = harness(again);
    await second.scheduler.start();
    await run(second.scheduler, 500);
    expect(second.dialled.map((d) => d.to).sort()).toEqual(
      first.dialled
        .slice(1)
        .map((d) => d.to)
        .sort(),
    );
    const rows = await again.results(c.id);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual([
      ["done", 1],
      ["dialing", 2],
      ["dialing", 2],
    ]);
    await second.scheduler.stop();
  });

  it("shares the cap between the bridges working a campaign; one that drains leaves them its share", async () => {
    const store = await openStore();
    const c = await campaign(store, 40, { pacePerMinute: 60_000, concurrency: 4 });
    const a = harness(store, { instance: "a" });
    const b = harness(store, { instance: "b" });
    await a.scheduler.start();
    await b.scheduler.start();
    const both = (ms: number) => run([a.scheduler, b.scheduler], ms);
    // A asked first and found no other bridge working the campaign: it took the whole cap; B, asking
    // after, found no room.
    await both(3000);
    expect([a.dialled.length, b.dialled.length]).toEqual([4, 0]);
    // Now both work it: A, over its share, lets the places its calls free go to B...
    a.scheduler.callEnded(a.dialled[0]!.callId, "answered", "done");
    await both(3000);
    a.scheduler.callEnded(a.dialled[1]!.callId, "answered", "done");
    await both(3000);
    expect([a.dialled.length, b.dialled.length]).toEqual([4, 2]);
    // ...and at its share it refills its own; B, at its share, takes none of them.
    a.scheduler.callEnded(a.dialled[2]!.callId, "answered", "done");
    await both(3000);
    expect([a.dialled.length, b.dialled.length]).toEqual([5, 2]);
    // B drains: it takes no more, its calls end, and A may have the whole cap.
    await b.scheduler.stop();
    for (const d of b.dialled) b.scheduler.callEnded(d.callId, "answered", "done");
    await both(3000);
    expect([a.dialled.length, b.dialled.length]).toEqual([7, 2]);
    expect((await store.get(c.id))?.counts.byStatus).toMatchObject({ dialing: 4, done: 5 });
    await a.scheduler.stop();
  });

  it("files a row as lost once its bridge stops renewing the lease, and another bridge calls it again", async () => {
    const store = await openStore();
    const c = await campaign(store, 1, { pacePerMinute: 6000 });
    const dead = harness(store, { instance: "dead", leaseMs: 5000 });
    await dead.scheduler.start();
    await run(dead.scheduler, 300);
    expect(dead.dialled.length).toBe(1);
    await dead.scheduler.stop();
    const alive = harness(store, { instance: "alive", leaseMs: 5000 });
    await alive.scheduler.start();
    await run(alive.scheduler, 4000);
    expect(alive.dialled.length).toBe(0);
    await run(alive.scheduler, 4000);
    expect(alive.dialled.length).toBe(1);
    // The dead bridge's late word on its attempt changes nothing: the row is on attempt 2 now.
    expect(
      await store.finish(
        "dead",
        { campaignId: c.id, rowNo: 1, attempt: 1, number: "", variables: {} },
        "answered",
        "late",
        now(),
      ),
    ).toBe(false);
    const [row] = await store.results(c.id);
    expect(row).toMatchObject({ status: "dialing", attempts: 2, callIds: ["out-dead-1", "out-alive-1"] });
    await alive.scheduler.stop();
  });

  it("files no row of a live bridge as lost after an outage of the store that both bridges saw", async () => {
    const store = await openStore();
    await campaign(store, 1, { pacePerMinute: 6000 });
    // The store unreachable for both bridges: every call to it fails while `down`.
    let down = false;
    const reachable = new Proxy(store, {
      get(target, key) {
        const v = Reflect.get(target, key, target) as unknown;
        if (typeof v !== "function") return v;
        return (...args: unknown[]) =>
          down
            ? Promise.reject(new Error("store unreachable"))
            : (v as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const a = harness(reachable, { instance: "a", leaseMs: 5000 });
    const b = harness(reachable, { instance: "b", leaseMs: 5000 });
    await a.scheduler.start();
    await b.scheduler.start();
    const both = (ms: number) => run([a.scheduler, b.scheduler], ms);
    await both(300);
    expect([a.dialled.length, b.dialled.length]).toEqual([1, 0]);
    down = true;
    await both(12_000);
    down = false;
    // B's ticks may come first once the store is back; A's call is still going.
    await both(12_000);
    expect([a.dialled.length, b.dialled.length]).toEqual([1, 0]);
    const [row] = await store.results((await store.running())[0]!.id);
    expect(row).toMatchObject({ status: "dialing", attempts: 1 });
    await a.scheduler.stop();
    await b.scheduler.stop();
  });
});
