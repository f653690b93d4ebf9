// SvcClient: one object giving typed access to every endpoint family of the service spec.
import { AsrApi } from "./asr.ts";
import { type BacklogLimits, DEFAULT_BACKLOG } from "./backlog.ts";
import { ChatApi } from "./chat.ts";
import type { ClientContext } from "./context.ts";
import { SvcError } from "./errors.ts";
import { FilesApi } from "./files.ts";
import { HttpCore, type SvcLogger } from "./http.ts";
import { ImagesApi } from "./images.ts";
import { MessagesApi } from "./messages.ts";
import { ResponsesApi } from "./responses.ts";
import { SpeechApi } from "./speech.ts";
import { TtsApi } from "./tts-session.ts";
import { VoicesApi } from "./voices.ts";

export interface SvcClientOptions {
  /** Root of the service (without `/v1`); default: env SVC_BASE_URL. */
  baseURL?: string;
  /** Default: env SVC_API_KEY. */
  apiKey?: string;
  /** Use the subscription plan tier paths (`/svc_plan/v1`) for speech (E4, E5, E6). */
  planTier?: boolean;
  /** Per call: time to the answer, then the longest gap between stream chunks. Default 60 s. */
  timeoutMs?: number;
  /**
   * Retries of retryable failures (408, 409, 429, 5xx, connection errors). Default 2. A request
   * whose kept-alive connection the server closed as it was reused is sent again at once, without
   * using one.
   */
  maxRetries?: number;
  /** A pino logger (or anything with debug/info/warn/error(obj, msg)). */
  logger?: SvcLogger;
  /** WebSocket root for E5; default: baseURL with ws:// or wss://. */
  wsBaseURL?: string;
  /** First retry delay, doubled per attempt (jittered). Default 500 ms. */
  retryBaseMs?: number;
  /** Largest retry delay. Default 8 s. */
  retryMaxMs?: number;
  /**
   * Bounds on what queues toward a service that does not keep up, and a callback told of each
   * drop (see backlog.ts). Defaults: 512 KiB per E6 upload, 1 MiB per E5 socket.
   */
  backlog?: Partial<BacklogLimits>;
}

export class SvcClient {
  readonly baseURL: string;
  /** E1 chat completions. */
  readonly chat: ChatApi;
  /** E2 messages. */
  readonly messages: MessagesApi;
  /** E3 responses. */
  readonly responses: ResponsesApi;
  /** E4 speech synthesis over HTTP. */
  readonly speech: SpeechApi;
  /** E5 speech synthesis over WebSocket (sessions). */
  readonly tts: TtsApi;
  /** E6 speech recognition. */
  readonly asr: AsrApi;
  /** E7 generation and E8 edit. */
  readonly images: ImagesApi;
  /** E9 files. */
  readonly files: FilesApi;
  /** E10 cloned voices. */
  readonly voices: VoicesApi;
  private readonly ctx: ClientContext;

  constructor(opts: SvcClientOptions = {}) {
    const baseURL = opts.baseURL ?? process.env.SVC_BASE_URL;
    const apiKey = opts.apiKey ?? process.env.SVC_API_KEY;
    if (!baseURL) throw new SvcError("SvcClient: baseURL is required (option baseURL or env SVC_BASE_URL)");
    if (!apiKey) throw new SvcError("SvcClient: apiKey is required (option apiKey or env SVC_API_KEY)");
    const timeoutMs = opts.timeoutMs ?? 60_000;
    const http = new HttpCore({
      baseURL,
      apiKey,
      timeoutMs,
      maxRetries: opts.maxRetries ?? 2,
      logger: opts.logger,
      retryBaseMs: opts.retryBaseMs,
      retryMaxMs: opts.retryMaxMs,
    });
    this.baseURL = http.baseURL;
    const wsBaseURL = (opts.wsBaseURL ?? http.baseURL.replace(/^http(s?):/, "ws$1:")).replace(/\/+$/, "");
    this.ctx = {
      http,
      apiKey,
      wsBaseURL,
      planTier: opts.planTier ?? false,
      timeoutMs,
      logger: opts.logger,
      backlog: { ...DEFAULT_BACKLOG, ...opts.backlog },
    };
    this.chat = new ChatApi(this.ctx);
    this.messages = new MessagesApi(this.ctx);
    this.responses = new ResponsesApi(this.ctx);
    this.speech = new SpeechApi(this.ctx);
    this.tts = new TtsApi(this.ctx);
    this.asr = new AsrApi(this.ctx);
    this.images = new ImagesApi(this.ctx);
    this.files = new FilesApi(this.ctx);
    this.voices = new VoicesApi(this.ctx);
  }

  /** Whether the speech endpoints use the plan tier prefix. */
  get planTier(): boolean {
    return this.ctx.planTier;
  }
}
