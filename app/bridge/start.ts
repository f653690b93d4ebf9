// The main job: the bridge process. It serves the call transports (Twilio, SIP, AudioSocket,
// Discord, browser calls), health, metrics, call records and the live console, and runs one
// CallSession per call. With no SVC_BASE_URL / SVC_API_KEY it starts the local service in-process
// and talks to it over loopback. This file puts the process together in order; each concern is a
// module beside it (services, records, sessions and the end of call, outbound calls, transports
// and SIP, HTTP, shutdown).
import type { FastifyInstance } from "fastify";
import type { AudioSocketServer } from "../../bridges/audiosocket/index.ts";
import type { BrowserCalls } from "../../bridges/browser/index.ts";
import type { DiscordBot } from "../../bridges/discord/index.ts";
import type { SipServer } from "../../bridges/sip/index.ts";
import type { CallControl } from "../../bridges/twilio/index.ts";
import { CallAdmission } from "../../src/agents/admission.ts";
import type { AgentCode } from "../../src/agents/code.ts";
import type { Config } from "../../src/config/config.ts";
import { type Clock, systemClock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import type { TranscriptStore } from "../../src/records/call-record.ts";
import type { AttemptResult } from "../../src/records/reports/reporter.ts";
import type { CallStore } from "../../src/records/store/call-store.ts";
import { describeFaults } from "../../src/service/conditions/faults.ts";
import { describeLatency } from "../../src/service/conditions/latency.ts";
import type { LocalService } from "../../src/service/index.ts";
import type { CallSession } from "../../src/session/call-session.ts";
import type { SessionServices } from "../../src/session/services.ts";
import { type Entrances, entrancesOf } from "../banner.ts";
import { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { ReloadResult } from "../reload.ts";
import { startTracing } from "../tracing/tracing.ts";
import { bridgeAccess } from "./bridge-access.ts";
import type { BridgeCampaigns } from "./campaigns.ts";
import { consoleFeed } from "./console-feed.ts";
import { endOfCall } from "./end-of-call.ts";
import { bridgeHttp, listen } from "./http.ts";
import { openLineLevels } from "./line-levels.ts";
import { liveAgents } from "./live-agents.ts";
import { startMcp } from "./mcp.ts";
import { startPlacing } from "./placing.ts";
import { callReader, openRecords } from "./records.ts";
import { serviceClient, serviceEndpoint, sessionServicesFor } from "./services.ts";
import { answerCalls, sessionStarter, speechDetectors } from "./sessions.ts";
import { shutDown } from "./shutdown.ts";
import { type SipSide, startSip } from "./sip.ts";
import {
  audioSocketServer,
  browserCalls,
  discordBot,
  type TransportDeps,
  twilioRoutes,
} from "./transports.ts";
import { warmTransferDialer } from "./warm-transfer.ts";

export interface Bridge {
  readonly url: string;
  readonly http: FastifyInstance;
  readonly metrics: BridgeMetrics;
  /** The records of live and recently ended calls, in memory. */
  readonly transcripts: TranscriptStore;
  /** Every call's record (SQLite in the data dir, or PostgreSQL). */
  readonly store: CallStore;
  /** The embedded local service, when the bridge runs one. */
  readonly localService: LocalService | undefined;
  /** The Discord bot, when DISCORD_TOKEN is set. */
  readonly discord: DiscordBot | undefined;
  readonly activeCalls: number;
  /** The SIP server (UDP and TCP), unless `sip.port` is off. */
  readonly sip: SipServer | undefined;
  /** The Asterisk AudioSocket server, when `audiosocket.port` is set. */
  readonly audioSocket: AudioSocketServer | undefined;
  /** Browser calls (WS /browser/call), when the console is on. */
  readonly browser: BrowserCalls | undefined;
  /** The token the console and /calls ask for (Authorization: Bearer …); undefined when `off`. */
  readonly token: string | undefined;
  /** Where people and programs reach the agent: the console's URL (with the token), and the rest. */
  readonly entrances: Entrances;
  /** The agents' names, `default` first (the console offers each). */
  readonly agents: string[];
  /** The session of a call in progress, by its id (the library's hooks act on it). */
  liveCall(callId: string): CallSession | undefined;
  /** This bridge's name in the records and the live feed (`store.instance`, else the host name). */
  readonly instance: string;
  /** The calls the bridge places (POST /calls, `voice-bridge dial`, the library's dial()). */
  readonly outbound: OutboundCalls;
  /** Call lists worked through at a pace (/campaigns), unless `campaigns.enabled` is false. */
  readonly campaigns: BridgeCampaigns | undefined;
  /**
   * Takes new agents, routes and call-start webhook from `next` (already validated): new calls get
   * them, live calls keep the agent they have. Without `next`, reads the configuration again
   * (BridgeOverrides.readConfig), refusing it when it has errors.
   */
  reload(next?: Config): ReloadResult;
  /** Stops taking calls, lets live ones finish (up to `drainMs`), then closes everything. */
  close(drainMs?: number): Promise<void>;
}

export interface BridgeOverrides {
  clock?: Clock;
  /** Calendar time for campaigns' calling hours, pace and leases, epoch ms (tests; default Date.now). */
  campaignTime?: () => number;
  /** Replaces the services built from the API client (fault-injection tests). */
  wrapServices?: (services: SessionServices) => SessionServices;
  /** Replaces Twilio's REST API for hang-up and transfer (tests: Twilio's servers are not reachable). */
  callControl?: CallControl;
  /** Hears each end-of-call report delivery attempt (tests). */
  onReportAttempt?: (result: AttemptResult) => void;
  /** Reads the configuration again, for a reload (the CLI's: the same file and environment). */
  readConfig?: () => Config;
  /** Says how to reach the agent once the bridge is up (default: one log line with a field per way in). */
  announce?: (entrances: Entrances) => void;
  /** The tools and hooks of agents defined in code (the TypeScript API), by agent name. */
  agentCode?: ReadonlyMap<string, AgentCode>;
  /** What `${NAME}` in MCP servers' settings reads (default: process.env). */
  env?: Readonly<Record<string, string | undefined>>;
}

function sessionOf(live: ReadonlySet<CallSession>, callId: string): CallSession | undefined {
  for (const s of live) if (s.callId === callId) return s;
  return undefined;
}

export async function startBridge(
  config: Config,
  log: Logger,
  overrides: BridgeOverrides = {},
): Promise<Bridge> {
  const clock = overrides.clock ?? systemClock;
  // First: a tool server that cannot start, or a clash of tool names, stops the bridge before it opens anything.
  const mcp = await startMcp(config, overrides.agentCode, log, overrides.env);
  const service = await serviceEndpoint(config, log);
  const { localService } = service;
  // The live calls, declared before the metrics that read them (the loop-lag sampler asks).
  const live = new Set<CallSession>();
  const metrics = new BridgeMetrics({ callsUp: () => live.size > 0 });
  const client = serviceClient(config, service, metrics, log);
  if (service.engineRefusals) metrics.countRefusals(service.engineRefusals);
  const servicesFor = sessionServicesFor({ client, config, metrics, log, clock }, overrides.wrapServices);
  const createDetector = await speechDetectors(metrics, log);
  const records = await openRecords(config, clock, log, overrides.onReportAttempt);
  const { store, transcripts, instance } = records;
  // The lines' usual caller levels: from the records' last calls, then the other bridges' as they end.
  const lineLevels = await openLineLevels(store, log);
  const tracing = await startTracing(config.tracing, { clock, log, instance });
  // SIP starts once the HTTP server listens; until then there is none to ask.
  let sip: SipSide = { server: undefined, rtpWorker: undefined };
  const agents = liveAgents(config, {
    log,
    observer: { webhookFailed: (cause) => metrics.agentWebhookFailures.inc({ cause }) },
    agentCode: mcp.agentCode,
    readConfig: overrides.readConfig,
    liveCalls: () => live.size,
    // A renewed SIP TLS certificate and key are taken too (a bad pair is logged, the old one kept).
    onReload: () => void sip.server?.reloadTls(),
  });
  const admission = new CallAdmission(() => agents.directory, log);
  let draining = false;
  const { token, access } = await bridgeAccess(config, log);
  // The console watches each call from outside: its feed hears the records and each call's activity.
  const feed = await consoleFeed(config, records, log);
  const http = bridgeHttp({
    log,
    metrics,
    store,
    access,
    draining: () => draining,
    liveCalls: () => live.size,
    sip: () => sip.server,
    agentNames: () => agents.directory.names,
    reload: () => agents.reload(),
    calls: callReader(records),
    feed,
    serviceTiming: localService ? describeLatency(config.local.latency) : undefined,
    serviceFaults: localService ? describeFaults(config.local.faults) : undefined,
  });

  const ended = endOfCall({ records, client, metrics, log });
  const startSession = sessionStarter({
    lines: lineLevels.lines,
    config,
    clock,
    log,
    metrics,
    records,
    feed,
    servicesFor,
    tracing,
    createDetector,
    endOfCall: ended,
    live,
    draining: () => draining,
    // Read per transfer: SIP's dialer exists once SIP is up, Twilio's once placing has started.
    dialPerson: warmTransferDialer(config, () => ({
      sip: sip.server?.dial,
      twilio: placing.twilioOutbound?.dial,
    })),
  });
  const onCall = answerCalls(admission, startSession);
  const placing = await startPlacing({
    http,
    config,
    log,
    clock,
    metrics,
    records,
    draining: () => draining,
    sip: () => sip.server,
    agents: () => agents.directory,
    startSession,
    servicesFor,
    endOfCall: ended,
    campaignTime: overrides.campaignTime,
    instance,
  });
  const { outbound, twilioOutbound, campaigns } = placing;
  const transports: TransportDeps = { config, log, clock, onCall, admission };
  const twilio = twilioRoutes(http, transports, twilioOutbound, overrides.callControl);
  const browser = feed ? browserCalls(http, transports, access) : undefined;

  const url = await listen(http, config.server, log, {
    recordings: records.recorder !== undefined,
    console: feed !== undefined,
    tokenRequired: access.required,
  });
  sip = await startSip(transports, metrics);
  const audioSocket = await audioSocketServer(transports);
  // One process serves every transport: the Discord bot runs beside the HTTP endpoints.
  const discord = await discordBot(transports);
  // Once the carriers are up: a campaign left running by the last start resumes now.
  await campaigns?.begin();
  const entrances = entrancesOf({
    url,
    config,
    consoleUrl: feed ? access.personUrl(`${url}/`) : undefined,
    sip: sip.server,
    audioSocket,
  });
  if (overrides.announce) overrides.announce(entrances);
  else log.info(entrances, "ready: how to reach the agent");

  return {
    url,
    http,
    metrics,
    transcripts,
    store,
    localService,
    sip: sip.server,
    audioSocket,
    browser,
    token: token.token,
    entrances,
    discord,
    instance,
    outbound,
    campaigns,
    liveCall: (callId) => sessionOf(live, callId),
    get activeCalls() {
      return live.size;
    },
    get agents() {
      return agents.directory.names;
    },
    reload: (next) => agents.reload(next),
    async close(drainMs = 30_000) {
      draining = true;
      await campaigns?.stop();
      lineLevels.close();
      const parts = {
        live,
        outbound,
        discord,
        twilio,
        browser,
        sip,
        audioSocket,
        http,
        records,
        localService,
        metrics,
        mcp,
        tracing,
        log,
      };
      await shutDown(parts, drainMs);
      await placing.close();
    },
  };
}
