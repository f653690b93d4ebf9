// The local service, started programmatically: the CLI's `service` command, the bridge's embedded
// default, every e2e test and every benchmark run it through startLocalService().
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Logger, pino } from "pino";
import { Accounts, resolveApiKeys } from "./auth.ts";
import {
  describeConditions,
  type FaultKind,
  type FaultProfile,
  type LatencyProfile,
  type ServiceConditionsOptions,
  serviceConditions,
} from "./conditions/index.ts";
import type { ServiceContext } from "./context.ts";
import { ChatService } from "./engines/chat/chat-service.ts";
import { type ChatEngineOptions, chatEngineKind, createChatEngine } from "./engines/chat/index.ts";
import type { ImageServiceOptions } from "./engines/image/options.ts";
import { MediaResolver } from "./media/resolve.ts";
import type { Transcriber } from "./media/transcriber.ts";
import { type EndpointCount, RequestTally } from "./request-tally.ts";
import { ROUTES } from "./routes/index.ts";
import { buildServer, closeServer } from "./server.ts";
import {
  describeSpeechEngines,
  type SpeechUpstreams,
  useSpeechUpstreams,
  useSyntheticSpeechEngines,
} from "./speech/engines.ts";
import { openDatabase } from "./store/db.ts";
import { FileStore } from "./store/files.ts";
import { WsRouter } from "./ws.ts";

export type {
  FaultKind,
  FaultProfile,
  LatencyProfile,
  ServiceConditionsOptions,
} from "./conditions/index.ts";
export { describeFaults, describeLatency } from "./conditions/index.ts";
export type { RouteOptions, ServiceContext, ServiceRoute } from "./context.ts";
export { EngineBusyError, engineRefusals } from "./engines/busy.ts";
export type { ChatEngineOptions } from "./engines/chat/index.ts";
export type { ImageServiceOptions } from "./engines/image/options.ts";
export type { AudioClip, Transcriber } from "./media/transcriber.ts";
export type { EndpointCount } from "./request-tally.ts";
export type { SpeechUpstreams } from "./speech/engines.ts";

export interface LocalServiceOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Where files, metadata and the dev key live; created when missing. */
  dataDir: string;
  /** Accepted bearer keys; none → one dev key, kept in the data dir. */
  apiKeys?: readonly string[];
  logger?: Logger;
  chat?: ChatEngineOptions;
  /** Speech recognition for audio parts in chat requests (the ASR engine); settable later on ctx. */
  transcribe?: Transcriber;
  /** Concurrent generations per API key before 429 (default 256). */
  maxConcurrentPerKey?: number;
  /** Idle time before a messages (E2) stream sends a ping (default 5000 ms). */
  pingIntervalMs?: number;
  /**
   * `synthetic` is for benchmarks only: tone-burst TTS, a fixed-phrase ASR and the scripted agent
   * at zero pace (src/service/engines/synthetic), so a load test measures the bridge, not the engines.
   */
  engineProfile?: "standard" | "synthetic";
  /** E7/E8: content blocklist, clock, engine (default: the placeholder engine). */
  images?: ImageServiceOptions;
  /** Upstream speech servers (OpenAI audio API) for E6 and for E4/E5; unset → embedded engines. */
  speech?: SpeechUpstreams;
  /** A hosted service's conditions to play (its timing, its failures); default none. */
  conditions?: ServiceConditionsOptions;
  /** How long close() waits for requests under way before cutting them (default 5000 ms). */
  closeGraceMs?: number;
}

/** The `local` section of the project configuration (src/config.ts), structurally. */
export interface LocalServiceConfig {
  host: string;
  port: number;
  dataDir: string;
  apiKeys: string[];
  chatEngine?: "scripted" | "openai-compatible" | undefined;
  chatUpstream?: string | undefined;
  chatUpstreamModel?: string | undefined;
  chatUpstreamApiKey?: string | undefined;
  scriptedAgent?: string | undefined;
  scriptedPaceMs?: number | undefined;
  engineProfile?: "standard" | "synthetic" | undefined;
  imageBlocklist?: string[] | undefined;
  asrUpstream?: string | undefined;
  asrUpstreamModel?: string | undefined;
  asrUpstreamApiKey?: string | undefined;
  ttsUpstream?: string | undefined;
  ttsUpstreamModel?: string | undefined;
  ttsUpstreamApiKey?: string | undefined;
  ttsUpstreamVoices?: Record<string, string> | undefined;
  speechUpstreamTimeoutMs?: number | undefined;
  latency?: LatencyProfile | undefined;
  faults?: FaultProfile | undefined;
}

/** The speech upstreams the `local` section configures (SVC_ASR_UPSTREAM, SVC_TTS_UPSTREAM …). */
export function speechUpstreamsFromConfig(local: LocalServiceConfig): SpeechUpstreams {
  const timeoutMs = local.speechUpstreamTimeoutMs;
  return {
    ...(local.asrUpstream
      ? {
          asr: {
            baseUrl: local.asrUpstream,
            model: local.asrUpstreamModel,
            apiKey: local.asrUpstreamApiKey,
            timeoutMs,
          },
        }
      : {}),
    ...(local.ttsUpstream
      ? {
          tts: {
            baseUrl: local.ttsUpstream,
            model: local.ttsUpstreamModel,
            apiKey: local.ttsUpstreamApiKey,
            voices: local.ttsUpstreamVoices,
            timeoutMs,
          },
        }
      : {}),
  };
}

/** Which engine serves which endpoints, in words (`voice-bridge config`, the start-up log). */
export function describeEngines(local: LocalServiceConfig): Record<string, string> {
  if (local.engineProfile === "synthetic") {
    return { all: "synthetic (benchmarks only): tones, one fixed transcript, the scripted agent" };
  }
  const speech = describeSpeechEngines(speechUpstreamsFromConfig(local));
  const chat =
    chatEngineKind(local.chatEngine, local.chatUpstream) === "openai-compatible"
      ? `upstream ${local.chatUpstream ?? "(SVC_CHAT_UPSTREAM unset)"}/chat/completions`
      : "embedded scripted agent";
  return {
    "chat (E1-E3)": chat,
    "speech synthesis (E4, E5)": speech.tts,
    "speech recognition (E6)": speech.asr,
    "images (E7, E8)": "embedded procedural placeholder",
  };
}

/** Maps the configuration's `local` section to startLocalService options (the logger aside). */
export function serviceOptionsFromConfig(local: LocalServiceConfig): LocalServiceOptions {
  const chat: ChatEngineOptions = {};
  if (local.chatEngine) chat.engine = local.chatEngine;
  if (local.chatUpstream) chat.upstream = local.chatUpstream;
  if (local.chatUpstreamModel) chat.upstreamModel = local.chatUpstreamModel;
  if (local.chatUpstreamApiKey) chat.upstreamApiKey = local.chatUpstreamApiKey;
  if (local.scriptedAgent) chat.agentFile = local.scriptedAgent;
  if (local.scriptedPaceMs !== undefined) chat.paceMs = local.scriptedPaceMs;
  return {
    host: local.host,
    port: local.port,
    dataDir: local.dataDir,
    apiKeys: local.apiKeys,
    chat,
    speech: speechUpstreamsFromConfig(local),
    conditions: { latency: local.latency, faults: local.faults },
    ...(local.engineProfile ? { engineProfile: local.engineProfile } : {}),
    ...(local.imageBlocklist ? { images: { blocklist: local.imageBlocklist } } : {}),
  };
}

export interface LocalService {
  /** Base URL, e.g. `http://127.0.0.1:8080` (paths start with /v1). */
  readonly url: string;
  readonly apiKeys: string[];
  /** True when the keys are the generated dev key (no keys were configured). */
  readonly devKey: boolean;
  readonly ctx: ServiceContext;
  /** Requests handled so far per endpoint (`POST /v1/chat/completions`: requests, streamed). */
  requests(): Readonly<Record<string, Readonly<EndpointCount>>>;
  /** Faults played so far per kind (local.faults). */
  faults(): Readonly<Record<FaultKind, number>>;
  close(): Promise<void>;
}

export async function startLocalService(opts: LocalServiceOptions): Promise<LocalService> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const log = (opts.logger ?? pino({ level: "silent" })).child({ component: "service" });
  const { keys, devKey } = resolveApiKeys(dataDir, opts.apiKeys ?? []);
  const accounts = new Accounts(keys);
  const db = openDatabase(dataDir);
  const files = new FileStore(db, dataDir, log.child({ store: "files" }));
  const holder: { ctx?: ServiceContext } = {};
  const synthetic = opts.engineProfile === "synthetic";
  const chatOptions = synthetic
    ? { ...opts.chat, engine: "scripted" as const, paceMs: 0 }
    : (opts.chat ?? {});
  const engine = createChatEngine(chatOptions, () => holder.ctx?.transcriber);
  const chat = new ChatService({
    engine,
    media: new MediaResolver(files, dataDir),
    ...(opts.maxConcurrentPerKey === undefined ? {} : { maxConcurrent: opts.maxConcurrentPerKey }),
    ...(opts.pingIntervalMs === undefined ? {} : { pingIntervalMs: opts.pingIntervalMs }),
  });
  const ctx: ServiceContext = {
    dataDir,
    log,
    accounts,
    ws: new WsRouter(accounts),
    db,
    files,
    chat,
    transcriber: opts.transcribe,
    images: opts.images,
    conditions: serviceConditions(opts.conditions),
    requests: new RequestTally(),
  };
  holder.ctx = ctx;
  if (opts.speech && !synthetic) useSpeechUpstreams(ctx, opts.speech);
  if (synthetic) {
    useSyntheticSpeechEngines(ctx);
    log.warn(
      "engine profile 'synthetic' (benchmarks only): speech is tones, every transcript one fixed phrase",
    );
  }
  const conditions = describeConditions(ctx.conditions);
  if (conditions) {
    const words = Object.entries(conditions).map(([k, v]) => `${k} ${v}`);
    log.info(conditions, `playing a hosted service's conditions: ${words.join("; ")}`);
  }
  const app = await buildServer(ctx, ROUTES);
  app.addHook("onClose", async () => db.close());
  const address = await app.listen({ host: opts.host ?? "127.0.0.1", port: opts.port ?? 0 });
  const url = address.replace("://0.0.0.0:", "://127.0.0.1:").replace("://[::]:", "://[::1]:");
  let closing: Promise<void> | undefined;
  return {
    url,
    apiKeys: keys,
    devKey,
    ctx,
    requests: () => ctx.requests.snapshot(),
    faults: () => ctx.conditions.faults.snapshot(),
    close() {
      closing ??= closeServer(app, opts.closeGraceMs);
      return closing;
    },
  };
}
