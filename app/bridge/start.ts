// The main job: the bridge process. It serves the call transports (Twilio, SIP, AudioSocket,
// Discord, browser calls), health, metrics, call records and the live console, and runs one
// CallSession per call. With no SVC_BASE_URL /
// SVC_API_KEY it starts the local service in-process and talks to it over loopback.
import { access } from "node:fs/promises";
import { resolve } from "node:path";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import { type AudioSocketServer, startAudioSocketServer } from "../../bridges/audiosocket/index.ts";
import { type BrowserCalls, registerBrowserCalls } from "../../bridges/browser/index.ts";
import type { DiscordBot } from "../../bridges/discord/index.ts";
import { isLoopbackHost } from "../../bridges/loopback.ts";
import { registerSipMetrics, type SipServer, startSipServer } from "../../bridges/sip/index.ts";
import {
  createRtpCallTransportFactory,
  type RtpWorker,
  registerRtpSendMetrics,
  startRtpWorker,
  UdpRtpPortPool,
} from "../../bridges/sip/rtp/index.ts";
import { restCallControl } from "../../bridges/twilio/call-control.ts";
import { type CallControl, registerTwilio, type TwilioRoutes } from "../../bridges/twilio/index.ts";
import { rebasedClient, registerTwilioOutbound, type TwilioOutbound } from "../../bridges/twilio/outbound.ts";
import { CallAdmission } from "../../src/agents/admission.ts";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { AgentCode } from "../../src/agents/code.ts";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { SvcClient } from "../../src/api/client.ts";
import { type Config, consoleEnabled, usesLocalService } from "../../src/config/config.ts";
import { type Clock, systemClock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { OutboundCalls } from "../../src/outbound/calls.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import { DialLimits } from "../../src/outbound/limits.ts";
import { recordFromEvents, TranscriptStore } from "../../src/records/call-record.ts";
import { outcomeOf } from "../../src/records/outcome.ts";
import { type CallReport, callReport } from "../../src/records/reports/report.ts";
import { type AttemptResult, CallReporter } from "../../src/records/reports/reporter.ts";
import { ReportSpool } from "../../src/records/reports/spool.ts";
import type { CallStore } from "../../src/records/store/call-store.ts";
import { instanceName, openCallStore } from "../../src/records/store/open.ts";
import type { LocalService } from "../../src/service/index.ts";
import { CallRecorder, type RecordingTransport } from "../../src/session/call-recording.ts";
import { CallSession } from "../../src/session/call-session.ts";
import type { SessionConfig } from "../../src/session/config.ts";
import type { SessionServices } from "../../src/session/services.ts";
import type { SpeechDetectorFactory } from "../../src/session/speech-detector.ts";
import type { CallInfo, CallTransport } from "../../src/session/transport.ts";
import { sileroDetectorFactory } from "../../src/session/vad-detector.ts";
import { type Entrances, entrancesOf } from "../banner.ts";
import { resolveBridgeToken } from "../bridge-token.ts";
import { WatchedTransport, watchServices } from "../console/call-activity.ts";
import { LiveFeed } from "../console/live-feed.ts";
import { registerConsole } from "../console/routes.ts";
import { BridgeAccess } from "../http/access.ts";
import { type CallReader, registerCallRoutes } from "../http/call-routes.ts";
import { registerOutboundRoutes } from "../http/outbound-routes.ts";
import { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import { type ReloadResult, registerReload, reloadWith, sectionsNeedingRestart } from "../reload.ts";
import { runAnalysis } from "./call-analysis.ts";
import { svcServices } from "./svc-adapters.ts";

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
  /** This bridge's name in the records and the live feed (`store.instance`, else the host name). */
  readonly instance: string;
  /** The calls the bridge places (POST /calls, `voice-bridge dial`, the library's dial()). */
  readonly outbound: OutboundCalls;
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
}

/** What the model is told about a conversation with several people in it. */
const GROUP_NOTE =
  "Several people talk with you here: each user message starts with the speaker's name and a colon. " +
  "Answer the person who spoke last, and use names when it helps.";
const GROUP_PROMPT =
  "You are a friendly voice assistant in a voice channel. Answer in one or two short spoken sentences, no lists or markdown.";
/** A voice channel is not a call to time out: the conversation lasts as long as people stay. */
const GROUP_MAX_MS = 24 * 3600_000;

/**
 * The session configuration for one conversation: a phone call's as configured; a voice
 * channel's with its members told apart (labelled turns, `discord.respondTo`, the agent's name).
 */
export function conversationConfig(agent: CallAgent, config: Config, info: CallInfo): SessionConfig {
  const base = agent.session;
  if (info.transport !== "discord") return base;
  const prompt = agent.prompted ? base.systemPrompt : GROUP_PROMPT;
  return {
    ...base,
    systemPrompt: `${prompt} ${GROUP_NOTE}`,
    maxCallMs: GROUP_MAX_MS,
    multiParty: {
      respondTo: config.discord.respondTo,
      agentName: config.discord.agentName ?? info.params.agentName ?? "agent",
    },
  };
}

export async function startBridge(
  config: Config,
  log: Logger,
  overrides: BridgeOverrides = {},
): Promise<Bridge> {
  const clock = overrides.clock ?? systemClock;
  let localService: LocalService | undefined;
  let engineRefusals: (() => Readonly<Record<string, number>>) | undefined;
  let baseURL = config.service.baseUrl;
  let apiKey = config.service.apiKey;
  if (usesLocalService(config)) {
    // Loaded only when used: a bridge on a hosted service never pays for the tokenizer and routes.
    const service = await import("../../src/service/index.ts");
    const { describeEngines, serviceOptionsFromConfig, startLocalService } = service;
    engineRefusals = service.engineRefusals;
    const { warmSpeechEngines } = await import("../../src/service/speech/engines.ts");
    localService = await startLocalService({ ...serviceOptionsFromConfig(config.local), logger: log });
    // Load the recognizer and start the TTS workers now, not on the first caller's first words.
    await warmSpeechEngines(localService.ctx);
    baseURL = localService.url;
    apiKey = localService.apiKeys[0];
    log.info(
      { url: localService.url, engines: describeEngines(config.local) },
      "service: embedded local service (no SVC_BASE_URL / SVC_API_KEY set)",
    );
  } else {
    log.info({ baseUrl: baseURL ?? "(client default)" }, "service: hosted API");
  }
  // The live calls, declared before the metrics that read them (the loop-lag sampler asks).
  const live = new Set<CallSession>();
  const metrics = new BridgeMetrics({ callsUp: () => live.size > 0 });
  const client = new SvcClient({
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    planTier: config.service.planTier,
    logger: log.child({ component: "client" }),
    backlog: { onShed: (e) => metrics.shed(e.queue, e.bytes) },
  });
  if (engineRefusals) metrics.countRefusals(engineRefusals);
  // Each call's services speak with its agent's voice and models (cheap: closures over the client).
  const servicesFor = (agent: CallAgent): SessionServices => {
    const services = svcServices(client, agent.models);
    return overrides.wrapServices ? overrides.wrapServices(services) : services;
  };
  const createDetector: SpeechDetectorFactory = await sileroDetectorFactory(
    // 16-bit samples at 16 kHz: 32 bytes a millisecond.
    { onSkip: (ms) => metrics.shed("vad_backlog", ms * 32) },
    log,
  );
  const instance = instanceName(config);
  const store = await openCallStore(config, log);
  const transcripts = new TranscriptStore(store, config.store.keepEnded);
  const recorder = config.agent.recordingDir
    ? new CallRecorder(
        config.agent.recordingDir,
        clock,
        (err, callId) =>
          log.error(
            { err, callId },
            "call recording: write failed (reported once per call); the call goes on",
          ),
        log,
      )
    : undefined;
  if (recorder) {
    log.info(
      { dir: recorder.dir },
      "recording calls: <callId>.wav (-2, -3, … if the id was recorded before), caller left, agent right",
    );
  }
  const reports = config.callReports;
  const reportDir = reports.dir ?? `${config.local.dataDir}/call-reports`;
  const reporter =
    reports.url && reports.secret
      ? new CallReporter({
          url: reports.url,
          secret: reports.secret,
          spool: new ReportSpool(reportDir),
          clock,
          log: log.child({ component: "reports" }),
          onAttempt: (result) => {
            const state = result.kind === "retry" ? "pending" : result.kind;
            store.setReport(result.reportId, state, result.status);
            overrides.onReportAttempt?.(result);
          },
        })
      : undefined;
  if (reporter) {
    log.info(
      { url: reports.url, dir: reportDir },
      "call reports: each ended call is POSTed to the URL, kept in the directory until delivered",
    );
    await reporter.start();
  }
  const pickObserver = { webhookFailed: (cause: string) => metrics.agentWebhookFailures.inc({ cause }) };
  let agents = new AgentDirectory(config, pickObserver, overrides.agentCode);
  let running = config;
  const applyConfig = (next: Config): ReloadResult => {
    agents = new AgentDirectory(next, pickObserver, overrides.agentCode);
    const restartNeeded = sectionsNeedingRestart(running, next);
    running = next;
    log.info(
      { agents: agents.names, routes: next.routes.length, liveCalls: live.size },
      "configuration reloaded: new calls get these agents, live calls keep theirs",
    );
    if (restartNeeded.length)
      log.warn(
        { sections: restartNeeded },
        "reload: these sections changed and take effect at the next start",
      );
    return { ok: true, agents: agents.names, restartNeeded };
  };
  const reload = (next?: Config): ReloadResult => {
    // A renewed SIP TLS certificate and key are taken too (a bad pair is logged, the old one kept).
    void sipForReadiness?.reloadTls();
    if (next) return applyConfig(next);
    if (!overrides.readConfig)
      return { ok: false, error: "this bridge was started without a configuration to read again" };
    return reloadWith(overrides.readConfig, applyConfig, log);
  };
  const admission = new CallAdmission(() => agents, log);
  // An ended call's whole record for its report; if the store cannot give back what memory let
  // go of, the report is made from what memory holds (said in the log) rather than not at all.
  const wholeRecord = (callId: string) =>
    transcripts.read(callId).catch((err: Error) => {
      log.error(
        { err, callId },
        "call report: the store could not give the call's first events; reporting the latest",
      );
      return recordFromEvents(transcripts.recent(callId));
    });
  const analyse = (agent: CallAgent, callId: string): Promise<void> =>
    runAnalysis(agent, callId, { client, transcripts, metrics, log });
  let draining = false;
  const token = await resolveBridgeToken(config.server.token, config.local.dataDir);
  const access = new BridgeAccess(token.token);
  if (token.source === "generated")
    log.info(
      { file: token.path },
      "bridge token: none configured (BRIDGE_TOKEN); made one and kept it in the file",
    );
  else if (token.source === "stored")
    log.info({ file: token.path }, "bridge token: the one kept in the file (BRIDGE_TOKEN unset)");
  else if (token.source === "off" && !isLoopbackHost(config.server.host))
    log.warn(
      { host: config.server.host },
      "BRIDGE_TOKEN=off: the console, every call record, recording and browser calls answer anyone who can reach this address",
    );
  // The console watches each call from outside: its feed hears the records and each call's activity.
  const feed = consoleEnabled(config) ? new LiveFeed(transcripts, instance) : undefined;
  if (feed && store.watchOthers) {
    // Every bridge on the database shows every live call: those already running, then as they go.
    store.watchOthers((e) => feed.elsewhere(e.instance, e.callId, e.event));
    await seedOtherBridgesCalls(store, feed, instance).catch((err: Error) =>
      log.warn({ err }, "console: could not read the other bridges' live calls"),
    );
  }

  const http = Fastify({
    loggerInstance: log.child({ component: "http" }) as FastifyBaseLogger,
    // Per-request lines would drown the per-call story the bridge logs.
    logController: new LogController({ disableRequestLogging: true }),
  });
  http.get("/healthz", async () => ({ status: "ok" }));
  // Ready while the database is down (calls go on, writes wait): the store's trouble is said here.
  // SIP registrations are detail, not readiness: a bridge whose trunk refused it still takes direct calls.
  let sipForReadiness: SipServer | undefined;
  const sipDetail = () => {
    const registrations = sipForReadiness?.registrations() ?? [];
    return registrations.length > 0 ? { sip: { registrations } } : {};
  };
  http.get("/readyz", async (_req, reply) => {
    const records = store.trouble
      ? { engine: store.engine, trouble: store.trouble }
      : { engine: store.engine };
    return draining
      ? reply.code(503).send({ status: "draining", store: records, ...sipDetail() })
      : { status: "ready", calls: live.size, store: records, ...sipDetail() };
  });
  http.get("/metrics", async (_req, reply) => {
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
  access.guard(
    http,
    (path) =>
      path === "/" ||
      path.startsWith("/console/") ||
      path === "/calls" ||
      path.startsWith("/calls/") ||
      path === "/agents",
  );
  // The agents a browser call can reach (the console's "Call the agent" offers each).
  http.get("/agents", async () => ({ agents: agents.names }));
  registerReload(http, access, () => reload());
  const reader: CallReader = {
    // A call in memory (live, or just ended) is read from there: the store may be a write behind
    // (a long call's first events memory let go of are read back from the store).
    async get(callId) {
      const here = await transcripts.read(callId);
      return here ? { ...here, instance } : store.get(callId);
    },
    list: (query) => store.list(query),
    async recordingOf(callId) {
      const stored = await store.get(callId).catch(() => undefined);
      return stored?.recording?.path ?? recorder?.pathOf(callId);
    },
    recording: recorder !== undefined,
  };
  registerCallRoutes(http, reader);
  if (feed) {
    registerConsole(http, { feed, metrics, log, authorize: (req, socket) => access.upgrade(req, socket) });
  }

  const onCall = (callTransport: CallTransport) => {
    void admission.take(callTransport.info).then((pick) => {
      if (pick.kind === "reject") {
        // A voice channel is not a call to refuse: the bot stays in it and says nothing.
        if (callTransport.info.transport !== "discord") void callTransport.hangUp(pick.reason);
        return;
      }
      startSession(callTransport, pick.agent);
    });
  };
  const startSession = (
    callTransport: CallTransport,
    agent: CallAgent,
    outbound?: { onEnd: (reason: string) => void },
  ): { end(reason: string): void } => {
    if (draining) {
      log.warn({ callId: callTransport.info.callId }, "refusing a call while draining");
      void callTransport.hangUp("bridge is shutting down");
      outbound?.onEnd("bridge is shutting down");
      return { end: () => {} };
    }
    const callId = callTransport.info.callId;
    // The recording wraps the transport, so the session records without knowing it; the console
    // watches the same way, from outside.
    const recording = agent.recording ? recorder?.record(callTransport) : undefined;
    const activity = feed?.activitySink(callId);
    const recorded = recording ?? callTransport;
    const transport = activity ? new WatchedTransport(recorded, activity) : recorded;
    const services = servicesFor(agent);
    const session = new CallSession({
      transport,
      services: activity ? watchServices(services, activity) : services,
      createSpeechDetector: createDetector,
      clock,
      config: conversationConfig(agent, config, transport.info),
      log: log.child({ agent: agent.name }),
      // An outbound call's record started when it was placed: the session's own call-start is not repeated.
      transcripts: outbound
        ? { append: (id, e) => e.type !== "call-start" && transcripts.append(id, e) }
        : transcripts,
      onTurnMetrics: (m) => metrics.observeTurn(m),
      onEnd: (reason) => {
        const callId = transport.info.callId;
        const recorded = recording?.close();
        if (recording)
          void recorded?.then(async () => {
            if (await fileExists(recording.path)) store.setRecording(callId, resolve(recording.path));
          });
        // The analysis (when the agent has one) goes into the record before the report is made.
        const analysed = agent.analysis ? analyse(agent, callId) : Promise.resolve();
        if (reporter) {
          const report = analysed.then(async () => {
            const record = await wholeRecord(callId);
            const made = record && callReport(record, { instance });
            if (made) store.setReport(made.reportId, "pending", undefined, callId);
            return made;
          });
          void reporter.submit(report.then((r) => r && withRecording(r, recording, recorded)));
        }
        live.delete(session);
        outbound?.onEnd(reason);
        metrics.activeCalls.dec();
        metrics.calls.inc({ transport: transport.info.transport, outcome: outcomeOf(reason) });
      },
    });
    live.add(session);
    metrics.activeCalls.inc();
    metrics.agentCalls.inc({ agent: agent.name });
    session.start();
    return session;
  };
  // Calls the bridge places (POST /calls, voice-bridge dial): the SIP dialer exists once SIP is up.
  let sipDialer: Dialer | undefined;
  const outboundCalls = new OutboundCalls({
    // Read at start like the SIP and Twilio settings it goes with (a reload says it needs a restart).
    config: () => config.outbound,
    draining: () => draining,
    dialers: () => ({ sip: sipDialer, twilio: twilioOutbound?.dial }),
    agents: () => agents,
    limits: new DialLimits(config.outbound.maxConcurrent, config.outbound.callsPerSecond),
    events: transcripts,
    startSession: (transport, agent, onEnd) => startSession(transport, agent, { onEnd }),
    tts: (agent) => servicesFor(agent).tts,
    log: log.child({ component: "outbound" }),
    onOutcome: (via, outcome) => metrics.outboundCalls.inc({ via, dial_outcome: outcome }),
    // Unanswered calls and machines end without a session: their report is made here.
    onEnded: async (callId) => {
      const record = reporter && (await wholeRecord(callId));
      const made = reporter && record && callReport(record, { instance });
      if (!made) return;
      store.setReport(made.reportId, "pending", undefined, callId);
      void reporter.submit(Promise.resolve(made));
    },
  });
  registerOutboundRoutes(http, outboundCalls);
  const { accountSid, authToken } = config.twilio;
  const twilioOutbound: TwilioOutbound | undefined =
    accountSid && authToken && config.server.publicUrl
      ? registerTwilioOutbound(http, {
          accountSid,
          authToken,
          publicUrl: config.server.publicUrl,
          ...(config.outbound.twilio.from ? { from: config.outbound.twilio.from } : {}),
          ...(config.outbound.twilio.apiBase ? { apiBase: config.outbound.twilio.apiBase } : {}),
          twilioAmd: config.outbound.twilio.amd === "twilio",
          log,
        })
      : undefined;
  const twilio: TwilioRoutes = registerTwilio(http, {
    config,
    log,
    clock,
    // A media stream of a call the bridge placed goes to that call; the rest are inbound calls.
    onCall: (transport) => twilioOutbound?.claim(transport) || onCall(transport),
    admit: (info) => admission.admit(info),
    ...(overrides.callControl
      ? { callControl: overrides.callControl }
      : accountSid && authToken && config.outbound.twilio.apiBase
        ? {
            callControl: restCallControl({
              accountSid,
              authToken,
              httpClient: rebasedClient(config.outbound.twilio.apiBase),
            }),
          }
        : {}),
  });
  const browser: BrowserCalls | undefined = feed
    ? registerBrowserCalls(http, {
        log,
        clock,
        onCall,
        authorize: (req, socket) => access.upgrade(req, socket),
      })
    : undefined;

  const address = await http.listen({ host: config.server.host, port: config.server.port });
  const url = address.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  log.info({ url }, `bridge listening on ${address}`);
  log.info(
    `serving: POST /twilio/voice, WS /twilio/media, GET /calls, /calls/:id${recorder ? ", /calls/:id/recording" : ""}, /metrics, /healthz, /readyz${feed ? "; the console: GET /, WS /console/live, WS /browser/call" : ""}${access.required ? " (BRIDGE_TOKEN required on the console and /calls)" : ""}`,
  );
  const sipConfig = config.sip;
  const rtpWorker: RtpWorker | undefined =
    sipConfig.port !== false && sipConfig.rtpThread === "worker"
      ? startRtpWorker({
          host: sipConfig.host,
          ports: sipConfig.rtpPorts,
          log,
          onShed: (frames, bytes) => {
            metrics.backlogDrops.inc({ queue: "sip_worker_frames" }, frames);
            metrics.backlogDroppedBytes.inc({ queue: "sip_worker_frames" }, bytes);
          },
        })
      : undefined;
  if (sipConfig.port !== false) registerRtpSendMetrics(metrics.registry);
  const sip =
    sipConfig.port === false
      ? undefined
      : await startSipServer({
          config: { ...sipConfig, port: sipConfig.port },
          log,
          clock,
          ports: rtpWorker ?? new UdpRtpPortPool({ host: sipConfig.host, ports: sipConfig.rtpPorts }),
          createTransport: createRtpCallTransportFactory(),
          onCall,
          admit: (info) => admission.admit(info),
          outbound: config.outbound.sip,
        });
  if (sip) registerSipMetrics(metrics.registry, sip);
  sipDialer = sip?.dial;
  if (sipDialer)
    log.info(
      { proxy: config.outbound.sip.proxy, from: config.outbound.sip.from },
      "outbound: SIP calls go through the outbound proxy (POST /calls, voice-bridge dial)",
    );
  sipForReadiness = sip;
  const audioSocket =
    config.audiosocket.port === false
      ? undefined
      : await startAudioSocketServer({
          host: config.audiosocket.host,
          port: config.audiosocket.port,
          log,
          clock,
          onCall,
        });
  // One process serves every transport: the Discord bot runs beside the HTTP endpoints when it has
  // a token. Loaded only then: discord.js and its voice stack are ~20 MB of live heap, which every
  // full garbage collection of a telephony-only bridge would mark for nothing.
  const discord: DiscordBot | undefined = config.discord.token
    ? (await import("../../bridges/discord/index.ts")).startDiscordBot({
        config,
        log,
        clock,
        onConversation: onCall,
      })
    : undefined;
  const entrances = entrancesOf({
    url,
    config,
    consoleUrl: feed ? access.personUrl(`${url}/`) : undefined,
    sip,
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
    sip,
    audioSocket,
    browser,
    token: token.token,
    entrances,
    discord,
    instance,
    outbound: outboundCalls,
    get activeCalls() {
      return live.size;
    },
    get agents() {
      return agents.names;
    },
    reload,
    async close(drainMs = 30_000) {
      draining = true;
      // New SIP calls and load-balancer probes get 503 + Retry-After from now on.
      void sip?.drain();
      const deadline = Date.now() + drainMs;
      if (live.size) log.info({ calls: live.size, drainMs }, "draining: waiting for live calls to end");
      while (live.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      for (const session of live) session.end("bridge shut down");
      await discord?.close();
      twilio.closeAll(1001, "bridge shutting down");
      browser?.closeAll(1001, "bridge shutting down");
      await sip?.close();
      await rtpWorker?.close();
      await audioSocket?.close();
      await http.close();
      await recorder?.close();
      await reporter?.close();
      await store.close();
      await localService?.close();
      metrics.close();
    },
  };
}

/** The live calls of the other bridges on the store, as they are now, for the console. */
async function seedOtherBridgesCalls(store: CallStore, feed: LiveFeed, instance: string): Promise<void> {
  const { calls } = await store.list({ outcome: "live", limit: 100 });
  for (const call of calls.filter((c) => c.instance !== instance)) {
    const record = await store.get(call.callId);
    if (record) feed.seedElsewhere(call.instance, call.callId, record.events);
  }
}

/** The report with its recording's path, once the file is complete (if the call was recorded). */
async function withRecording(
  report: CallReport,
  recording: RecordingTransport | undefined,
  closed: Promise<void> | undefined,
): Promise<CallReport> {
  if (!recording) return report;
  await closed?.catch(() => {});
  return (await fileExists(recording.path)) ? { ...report, recordingPath: resolve(recording.path) } : report;
}

/** Whether a file is there, asked without blocking the loop that carries the calls' audio. */
function fileExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
