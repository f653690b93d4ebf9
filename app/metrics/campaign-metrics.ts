// Campaigns on /metrics: each running or paused campaign's rows by status (read from the store
// when /metrics is scraped, so every bridge on one PostgreSQL reports the same), and what this
// bridge did: rows it claimed, calls it placed (first attempts and retries), rows it did not dial
// and why, rows it filed as lost (their bridge died), and its campaign calls in progress.
import { Counter, Gauge, type Registry } from "prom-client";
import type { SchedulerObserver } from "../../src/campaigns/scheduler.ts";
import type { CampaignStore, ClaimedRow } from "../../src/campaigns/store.ts";
import type { Logger } from "../../src/core/log.ts";

export class CampaignMetrics implements SchedulerObserver {
  readonly #claimed: Counter;
  readonly #dials: Counter<"attempt">;
  readonly #notDialled: Counter<"reason">;
  readonly #lost: Counter;

  constructor(registry: Registry, o: { store: CampaignStore; live: () => number; log: Logger }) {
    new Gauge({
      name: "voice_bridge_campaign_rows",
      help: "rows of each running or paused campaign by status (pending, dialing, done, skipped, canceled), over every bridge",
      labelNames: ["campaign", "status"],
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const r of await o.store.activeRows())
            this.set({ campaign: r.campaignId, status: r.status }, r.rows);
        } catch (err) {
          o.log.warn({ err }, "campaign metrics: the store did not answer; rows left out of this scrape");
        }
      },
    });
    new Gauge({
      name: "voice_bridge_campaign_live_calls",
      help: "campaign calls this bridge placed that are still in progress",
      registers: [registry],
      collect() {
        this.set(o.live());
      },
    });
    this.#claimed = new Counter({
      name: "voice_bridge_campaign_rows_claimed_total",
      help: "campaign rows this bridge took for dialling",
      registers: [registry],
    });
    this.#dials = new Counter({
      name: "voice_bridge_campaign_dials_total",
      help: "campaign calls this bridge placed, by attempt (first, retry)",
      labelNames: ["attempt"],
      registers: [registry],
    });
    this.#notDialled = new Counter({
      name: "voice_bridge_campaign_not_dialled_total",
      help: "campaign rows this bridge took but did not dial, by reason: do_not_call (skipped), deferred (the outbound limits or a drain: put back), failed (refused for good)",
      labelNames: ["reason"],
      registers: [registry],
    });
    this.#lost = new Counter({
      name: "voice_bridge_campaign_rows_lost_total",
      help: "campaign rows this bridge filed as lost: their bridge stopped renewing its lease, or this one restarted",
      registers: [registry],
    });
  }

  claimed(_campaignId: string, rows: number): void {
    this.#claimed.inc(rows);
  }

  dialled(_campaignId: string, row: ClaimedRow): void {
    this.#dials.inc({ attempt: row.attempt > 1 ? "retry" : "first" });
  }

  notDialled(_campaignId: string, why: "do-not-call" | "deferred" | "failed"): void {
    this.#notDialled.inc({ reason: why.replaceAll("-", "_") });
  }

  lost(rows: number): void {
    this.#lost.inc(rows);
  }
}
