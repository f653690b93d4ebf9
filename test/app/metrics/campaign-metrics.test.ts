// Campaign metrics from a real scheduler on the real SQLite store (virtual time): rows by status
// read from the store at the scrape, what this bridge claimed, dialled (first attempts, retries),
// skipped or put back, and lost.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { CampaignMetrics } from "../../../app/metrics/campaign-metrics.ts";
import { campaignSettingsSchema } from "../../../src/campaigns/campaign.ts";
import { CampaignScheduler } from "../../../src/campaigns/scheduler.ts";
import { CampaignStore } from "../../../src/campaigns/store.ts";
import { SqliteCampaignEngine } from "../../../src/campaigns/store-sqlite.ts";
import { VirtualClock } from "../../../src/core/clock.ts";

const log = pino({ level: "silent" });
const BASE = Date.parse("2025-01-15T10:00:00Z");
let dir: string | undefined;
let store: CampaignStore | undefined;

afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("campaign metrics", () => {
  it("count rows by status, claims, first dials and retries, rows not dialled and rows lost", async () => {
    dir = mkdtempSync(join(tmpdir(), "campaign-metrics-"));
    const s = new CampaignStore(await SqliteCampaignEngine.open(join(dir, "voice-bridge.db")));
    store = s;
    const clock = new VirtualClock();
    const now = () => BASE + clock.now();
    await s.create(
      {
        id: "cmp-m",
        name: "metrics",
        status: "running",
        settings: campaignSettingsSchema.parse({
          callingHours: { days: "mon-sun", from: "00:00", to: "24:00" },
          pacePerMinute: 6000,
          retry: { busy: { attempts: 2, delayS: 1 } },
        }),
        createdAt: new Date(now()).toISOString(),
      },
      ["+15550001", "+15550002", "+15559999"].map((number, i) => ({ number, variables: {}, line: i + 2 })),
      now(),
    );
    const registry = new Registry();
    let scheduler: CampaignScheduler | undefined;
    const metrics = new CampaignMetrics(registry, { store: s, live: () => scheduler?.live ?? 0, log });
    const placed: string[] = [];
    let refuseNext = true;
    scheduler = new CampaignScheduler({
      store: s,
      instance: "a",
      clock,
      now,
      leaseMs: 30_000,
      place: (body) => {
        if (body.to === "+15559999")
          return { ok: false, status: 403, field: "to", message: "on the do-not-call list" };
        if (refuseNext) {
          refuseNext = false;
          return { ok: false, status: 429, message: "over the limits", retryAfterS: 1 };
        }
        placed.push(`out-${placed.length + 1}`);
        return { ok: true, callId: placed.at(-1)! };
      },
      cancelCall: () => {},
      headroom: () => 10,
      log,
      observer: metrics,
    });
    const run = async (ms: number) => {
      for (let t = 0; t < ms; t += 100) {
        clock.advance(100);
        await scheduler!.settled();
      }
    };
    await scheduler.start();
    await run(3000);
    expect(placed).toHaveLength(2);
    scheduler.callEnded(placed[0]!, "busy", "486 Busy Here");
    await run(3000);
    expect(placed).toHaveLength(3);
    const text = await registry.metrics();
    expect(text).toContain('voice_bridge_campaign_rows{campaign="cmp-m",status="dialing"} 2');
    expect(text).toContain('voice_bridge_campaign_rows{campaign="cmp-m",status="skipped"} 1');
    expect(text).toContain('voice_bridge_campaign_dials_total{attempt="first"} 2');
    expect(text).toContain('voice_bridge_campaign_dials_total{attempt="retry"} 1');
    // The first claim's three rows put back: the one refused (429) and the two behind it.
    expect(text).toContain('voice_bridge_campaign_not_dialled_total{reason="deferred"} 3');
    expect(text).toContain('voice_bridge_campaign_not_dialled_total{reason="do_not_call"} 1');
    // Every row claimed is dialled or not: three put back and claimed again, then the busy row's retry.
    expect(text).toContain("voice_bridge_campaign_rows_claimed_total 7");
    expect(text).toContain("voice_bridge_campaign_live_calls 2");
    await scheduler.stop();
    // The same bridge starting again files its rows in progress as lost.
    const again = new CampaignScheduler({
      store: s,
      instance: "a",
      clock,
      now,
      leaseMs: 30_000,
      place: () => ({ ok: true, callId: "out-x" }),
      cancelCall: () => {},
      headroom: () => 0,
      log,
      observer: metrics,
    });
    await again.start();
    await again.stop();
    expect(await registry.metrics()).toContain("voice_bridge_campaign_rows_lost_total 2");
  });
});
