// Campaigns on this bridge: their store (beside the call records), the scheduler that places
// their calls through the outbound path, the outcomes read from the call records as each call
// ends, and the control surface the HTTP routes and the library share.
import type { Registry } from "prom-client";
import type { AgentDirectory } from "../../src/agents/directory.ts";
import { CampaignControl } from "../../src/campaigns/control.ts";
import { openCampaignStore } from "../../src/campaigns/open.ts";
import { attemptOutcome } from "../../src/campaigns/outcome.ts";
import { CampaignScheduler } from "../../src/campaigns/scheduler.ts";
import type { Config } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import type { CallEvent, TranscriptStore } from "../../src/records/call-record.ts";
import { CampaignMetrics } from "../metrics/campaign-metrics.ts";

export interface CampaignsDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly clock: Clock;
  /** Calendar time for calling hours, pace and leases (tests move it; default Date.now). */
  readonly now?: () => number;
  readonly instance: string;
  readonly outbound: OutboundCalls;
  readonly agents: () => AgentDirectory;
  readonly dialers: () => { readonly sip?: unknown; readonly twilio?: unknown };
  readonly transcripts: TranscriptStore;
  /** Where the campaign metrics go (the bridge's /metrics). */
  readonly registry: Registry;
}

export interface BridgeCampaigns {
  readonly control: CampaignControl;
  readonly scheduler: CampaignScheduler;
  /** Starts working through running campaigns (once the carriers are up). */
  begin(): Promise<void>;
  /** Stops claiming rows (the bridge drains); outcomes of calls in progress are still filed. */
  stop(): Promise<void>;
  /** After the drain: files what is left and closes the store. */
  close(): Promise<void>;
}

export async function startCampaigns(d: CampaignsDeps): Promise<BridgeCampaigns | undefined> {
  const { config } = d;
  if (!config.campaigns.enabled) return undefined;
  const log = d.log.child({ component: "campaigns" });
  const now = d.now ?? (() => Date.now());
  const store = await openCampaignStore(config);
  let scheduler: CampaignScheduler | undefined;
  const metrics = new CampaignMetrics(d.registry, { store, live: () => scheduler?.live ?? 0, log });
  scheduler = new CampaignScheduler({
    store,
    instance: d.instance,
    clock: d.clock,
    now,
    leaseMs: config.campaigns.leaseSeconds * 1000,
    place: (body) => d.outbound.place(body),
    cancelCall: (callId) => void d.outbound.cancel(callId),
    headroom: () => config.outbound.maxConcurrent - d.outbound.live,
    log,
    observer: metrics,
  });
  const control = new CampaignControl({
    store,
    scheduler,
    limits: { maxBytes: config.campaigns.maxListBytes, maxRows: config.campaigns.maxRows },
    now,
    agentProblem: (name) => {
      const directory = d.agents();
      return directory.get(name)
        ? undefined
        : `no agent named "${name}" (agents: ${directory.names.join(", ")})`;
    },
    dialProblem: (via) =>
      d.dialers()[via]
        ? undefined
        : via === "sip"
          ? "SIP dialling is not configured: set SIP_OUTBOUND_PROXY (outbound.sip.proxy), and SIP must be on"
          : "Twilio dialling is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, PUBLIC_URL and TWILIO_OUTBOUND_FROM",
  });
  const stopWatching = watchOutcomes(d.transcripts, scheduler, (callId, analysis) =>
    store
      .setAnalysis(callId, analysis)
      .catch((err: Error) => log.warn({ err, callId }, "campaigns: analysis not kept")),
  );
  return {
    control,
    scheduler,
    async begin() {
      await scheduler.start();
      log.info({ store: store.engine, instance: d.instance }, "campaigns: working through running campaigns");
    },
    stop: () => scheduler.stop(),
    async close() {
      await scheduler.stop();
      await scheduler.settled();
      stopWatching();
      await store.close();
    },
  };
}

/** Reads each campaign call's outcome from its record as it ends (and its analysis after). */
function watchOutcomes(
  transcripts: TranscriptStore,
  scheduler: CampaignScheduler,
  analysed: (callId: string, analysis: unknown) => void,
): () => void {
  const dials = new Map<string, Extract<CallEvent, { type: "dial" }>>();
  /** Campaign calls ended lately, whose analysis may still come. */
  const ended = new Set<string>();
  return transcripts.observe((callId, event) => {
    if (!callId.startsWith("out-")) return;
    if (event.type === "dial") dials.set(callId, event);
    else if (event.type === "call-end") {
      const { outcome, reason } = attemptOutcome(dials.get(callId), event);
      dials.delete(callId);
      if (scheduler.callEnded(callId, outcome, reason)) {
        ended.add(callId);
        if (ended.size > 1000) ended.delete(ended.values().next().value!);
      }
    } else if (event.type === "analysis" && ended.has(callId)) {
      ended.delete(callId);
      analysed(callId, event.analysis);
    }
  });
}
