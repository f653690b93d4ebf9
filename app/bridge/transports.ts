// The ways calls come in besides SIP (sip.ts): Twilio Media Streams and browser calls on the HTTP
// server, Asterisk AudioSocket on a port of its own, and the Discord bot. Each hands its calls to
// `onCall`; those that ring first ask `admission` whether to answer.
import type { FastifyInstance } from "fastify";
import { type AudioSocketServer, startAudioSocketServer } from "../../bridges/audiosocket/index.ts";
import { type BrowserCalls, registerBrowserCalls } from "../../bridges/browser/index.ts";
import type { DiscordBot } from "../../bridges/discord/index.ts";
import { restCallControl } from "../../bridges/twilio/call-control.ts";
import { type CallControl, registerTwilio, type TwilioRoutes } from "../../bridges/twilio/index.ts";
import { rebasedClient, type TwilioOutbound } from "../../bridges/twilio/outbound.ts";
import type { CallAdmission } from "../../src/agents/admission.ts";
import type { Config } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport } from "../../src/session/transport.ts";
import type { BridgeAccess } from "../http/access.ts";
import { discordSettings, twilioSettings } from "./transport-settings.ts";

export interface TransportDeps {
  readonly config: Config;
  readonly log: Logger;
  readonly clock: Clock;
  /** A call whose media has started: its session starts. */
  readonly onCall: (transport: CallTransport) => void;
  readonly admission: CallAdmission;
}

export function twilioRoutes(
  http: FastifyInstance,
  d: TransportDeps,
  outbound: TwilioOutbound | undefined,
  callControl: CallControl | undefined,
): TwilioRoutes {
  const { config } = d;
  const { accountSid, authToken } = config.twilio;
  const apiBase = config.outbound.twilio.apiBase;
  return registerTwilio(http, {
    settings: twilioSettings(config),
    log: d.log,
    clock: d.clock,
    // A media stream of a call the bridge placed goes to that call; the rest are inbound calls.
    onCall: (transport) => outbound?.claim(transport) || d.onCall(transport),
    admit: (info) => d.admission.admit(info),
    ...(callControl
      ? { callControl }
      : accountSid && authToken && apiBase
        ? { callControl: restCallControl({ accountSid, authToken, httpClient: rebasedClient(apiBase) }) }
        : {}),
  });
}

/** Browser calls (WS /browser/call), with the console: behind the bridge's token like it. */
export function browserCalls(http: FastifyInstance, d: TransportDeps, access: BridgeAccess): BrowserCalls {
  return registerBrowserCalls(http, {
    log: d.log,
    clock: d.clock,
    onCall: d.onCall,
    authorize: (req, socket) => access.upgrade(req, socket),
  });
}

/** The AudioSocket server, when `audiosocket.port` is set. */
export async function audioSocketServer(d: TransportDeps): Promise<AudioSocketServer | undefined> {
  const { host, port } = d.config.audiosocket;
  if (port === false) return undefined;
  return startAudioSocketServer({ host, port, log: d.log, clock: d.clock, onCall: d.onCall });
}

/**
 * The Discord bot, when it has a token. Loaded only then: discord.js and its voice stack are
 * ~20 MB of live heap, which every full garbage collection of a telephony-only bridge would mark
 * for nothing.
 */
export async function discordBot(d: TransportDeps): Promise<DiscordBot | undefined> {
  const { token } = d.config.discord;
  if (!token) return undefined;
  const { startDiscordBot } = await import("../../bridges/discord/index.ts");
  return startDiscordBot({
    settings: discordSettings(d.config.discord, token),
    log: d.log,
    clock: d.clock,
    onConversation: d.onCall,
  });
}
