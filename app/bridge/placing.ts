// Everything the bridge dials out with: one call at a time (POST /calls, through the SIP outbound
// proxy or Twilio's REST API) and call lists worked through at a pace (campaigns), both checked
// against the do-not-call list, with their HTTP routes.
import type { FastifyInstance } from "fastify";
import type { SipServer } from "../../bridges/sip/index.ts";
import type { TwilioOutbound } from "../../bridges/twilio/outbound.ts";
import { DoNotCallList } from "../../src/campaigns/do-not-call.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import { registerCampaignRoutes } from "../http/campaign-routes.ts";
import { registerOutboundRoutes } from "../http/outbound-routes.ts";
import { type BridgeCampaigns, startCampaigns } from "./campaigns.ts";
import { type PlacedCallsDeps, placedCalls, twilioDialer } from "./outbound.ts";

export interface PlacingDeps extends Omit<PlacedCallsDeps, "doNotCall" | "dialers"> {
  readonly http: FastifyInstance;
  readonly clock: Clock;
  /** Calendar time for campaigns (tests; default Date.now). */
  readonly campaignTime: (() => number) | undefined;
  readonly instance: string;
  /** The SIP server, once SIP is up (after the HTTP routes). */
  readonly sip: () => SipServer | undefined;
}

export interface Placing {
  readonly outbound: OutboundCalls;
  readonly twilioOutbound: TwilioOutbound | undefined;
  readonly campaigns: BridgeCampaigns | undefined;
  /** After the calls drained: the campaigns' store and the do-not-call list's watch. */
  close(): Promise<void>;
}

export async function startPlacing(d: PlacingDeps): Promise<Placing> {
  const { http, config, log } = d;
  const doNotCall = await DoNotCallList.open(config.campaigns.doNotCallFile, log);
  // Read per call: the SIP dialer exists once SIP is up.
  const dialers = () => ({ sip: d.sip()?.dial, twilio: twilioOutbound?.dial });
  const outbound = placedCalls({ ...d, doNotCall: (to) => doNotCall.has(to), dialers });
  registerOutboundRoutes(http, outbound);
  const twilioOutbound = twilioDialer(http, config, log);
  const campaigns = await startCampaigns({
    config,
    log,
    clock: d.clock,
    ...(d.campaignTime ? { now: d.campaignTime } : {}),
    instance: d.instance,
    outbound,
    agents: d.agents,
    dialers,
    transcripts: d.records.transcripts,
    registry: d.metrics.registry,
  });
  if (campaigns) registerCampaignRoutes(http, campaigns.control, config.campaigns);
  return {
    outbound,
    twilioOutbound,
    campaigns,
    async close() {
      await campaigns?.close();
      doNotCall.close();
    },
  };
}
