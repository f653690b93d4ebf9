// Calls the bridge places (POST /calls, `voice-bridge dial`, the library's dial()): through the SIP
// outbound proxy once SIP is up, or through Twilio's REST API when the account and PUBLIC_URL are set.
import type { FastifyInstance } from "fastify";
import { registerTwilioOutbound, type TwilioOutbound } from "../../bridges/twilio/outbound.ts";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { AgentDirectory } from "../../src/agents/directory.ts";
import type { Config } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import { OutboundCalls } from "../../src/outbound/calls.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import { DialLimits } from "../../src/outbound/limits.ts";
import type { SessionServices } from "../../src/session/services.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { EndOfCall } from "./end-of-call.ts";
import type { Records } from "./records.ts";
import type { StartSession } from "./sessions.ts";

export interface PlacedCallsDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly metrics: BridgeMetrics;
  readonly records: Records;
  readonly draining: () => boolean;
  /** The do-not-call list, asked at dial time. */
  readonly doNotCall: (to: string) => boolean;
  /** Read per call: the SIP dialer exists once SIP is up, after the HTTP routes. */
  readonly dialers: () => { readonly sip: Dialer | undefined; readonly twilio: Dialer | undefined };
  readonly agents: () => AgentDirectory;
  readonly startSession: StartSession;
  readonly servicesFor: (agent: CallAgent) => SessionServices;
  readonly endOfCall: EndOfCall;
}

export function placedCalls(d: PlacedCallsDeps): OutboundCalls {
  const { config, metrics } = d;
  return new OutboundCalls({
    // Read at start like the SIP and Twilio settings it goes with (a reload says it needs a restart).
    config: () => config.outbound,
    draining: d.draining,
    doNotCall: d.doNotCall,
    dialers: d.dialers,
    agents: d.agents,
    limits: new DialLimits(config.outbound.maxConcurrent, config.outbound.callsPerSecond),
    events: d.records.transcripts,
    startSession: (transport, agent, onEnd) => d.startSession(transport, agent, { onEnd }),
    tts: (agent) => d.servicesFor(agent).tts,
    log: d.log.child({ component: "outbound" }),
    onOutcome: (via, outcome) => metrics.outboundCalls.inc({ via, dial_outcome: outcome }),
    // Unanswered calls and machines end without a session: their report is made here.
    onEnded: (callId) => d.endOfCall.unansweredEnded(callId),
  });
}

/** Twilio's REST dialer and its callbacks, when the account and the public URL are configured. */
export function twilioDialer(http: FastifyInstance, config: Config, log: Logger): TwilioOutbound | undefined {
  const { accountSid, authToken } = config.twilio;
  const { publicUrl } = config.server;
  const twilio = config.outbound.twilio;
  if (!accountSid || !authToken || !publicUrl) return undefined;
  return registerTwilioOutbound(http, {
    accountSid,
    authToken,
    publicUrl,
    ...(twilio.from ? { from: twilio.from } : {}),
    ...(twilio.apiBase ? { apiBase: twilio.apiBase } : {}),
    twilioAmd: twilio.amd === "twilio",
    log,
  });
}
