// One call's services with the recovery its agent asks for (#54): the chat hedged, retried and
// taken up again within the agent's deadlines, recognition and synthesis sent to the fallback
// when their own target fails or its circuit is open, every outcome told to the bridge's one
// ServiceHealth. A fallback on another service has its own client, one per address and key.
import type { CallAgent, ServiceFallback } from "../../src/agents/call-agent.ts";
import type { SvcClient } from "../../src/api/client.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { ChatRoute } from "../../src/session/resilience/chat-attempt.ts";
import { originOf } from "../../src/session/resilience/request-signals.ts";
import { ResilientChat } from "../../src/session/resilience/resilient-chat.ts";
import { ResilientRecognizer, ResilientSynthesizer } from "../../src/session/resilience/resilient-speech.ts";
import type { ServiceHealth, ServiceKind } from "../../src/session/resilience/service-health.ts";
import type { ServiceModels, SessionServices } from "../../src/session/services.ts";
import type { RequestHeaders } from "../tracing/tracing.ts";
import { svcChatSource, svcServices } from "./svc-adapters.ts";

/** Fallback services kept at once (a webhook could name a new one per call). */
const MAX_FALLBACK_CLIENTS = 16;

/** The clients of fallback services, one per address and key, made at first use. */
export class FallbackClients {
  readonly #make: (endpoint: { baseURL: string; apiKey: string }) => SvcClient;
  readonly #clients = new Map<string, SvcClient>();

  constructor(make: (endpoint: { baseURL: string; apiKey: string }) => SvcClient) {
    this.#make = make;
  }

  get(endpoint: { baseUrl: string; apiKey: string }): SvcClient {
    const key = `${endpoint.baseUrl}\n${endpoint.apiKey}`;
    let client = this.#clients.get(key);
    if (client) return client;
    client = this.#make({ baseURL: endpoint.baseUrl, apiKey: endpoint.apiKey });
    if (this.#clients.size >= MAX_FALLBACK_CLIENTS) this.#clients.delete(this.#clients.keys().next().value!);
    this.#clients.set(key, client);
    return client;
  }
}

export interface ResilientServicesDeps {
  client: SvcClient;
  clients: FallbackClients;
  health: ServiceHealth;
  clock: Clock;
  log: Logger;
}

/** The agent's models with its fallback's in their place. */
function fallbackModels(models: ServiceModels, f: ServiceFallback): ServiceModels {
  return {
    ...models,
    chatModel: f.chatModel ?? models.chatModel,
    ttsModel: f.ttsModel ?? models.ttsModel,
    voice: f.voice ?? models.voice,
    asrModel: f.asrModel ?? models.asrModel,
  };
}

/** What names one endpoint's target: the model (and, for speech, the voice). */
const modelOf: Record<ServiceKind, (m: ServiceModels) => string> = {
  chat: (m) => m.chatModel,
  asr: (m) => m.asrModel,
  tts: (m) => `${m.ttsModel} ${m.voice}`,
};

export function resilientServices(
  deps: ResilientServicesDeps,
  agent: CallAgent,
  requestHeaders?: RequestHeaders,
): SessionServices {
  const { models, session, resilience } = agent;
  const { clock, health } = deps;
  const d = session.deadlines;
  // A request's own signal leads back to the turn's, which the trace knows it by.
  const headers = requestHeaders && ((signal?: AbortSignal) => requestHeaders(signal && originOf(signal)));
  const options = (signal?: AbortSignal) => (headers ? { signal, headers: headers(signal) } : { signal });
  const fb = resilience.fallback;
  const fbClient = fb?.endpoint ? deps.clients.get(fb.endpoint) : deps.client;
  const fbModels = fb ? fallbackModels(models, fb) : models;
  const target = (client: SvcClient, endpoint: ServiceKind, m: ServiceModels) =>
    health.target({ endpoint, baseUrl: client.baseURL, model: modelOf[endpoint](m) }, resilience.circuit);
  /** A fallback for `endpoint` when the agent's differs from its own there. */
  const differs = (endpoint: ServiceKind) =>
    fb !== undefined &&
    (fbClient !== deps.client || modelOf[endpoint](fbModels) !== modelOf[endpoint](models));

  const serviceOptions = { ttsOpenMs: d.ttsFirstAudioMs };
  const own = svcServices(deps.client, models, headers, serviceOptions);
  const other = fb ? svcServices(fbClient, fbModels, headers, serviceOptions) : undefined;
  const chatRoute = (client: SvcClient, m: ServiceModels, isFallback: boolean): ChatRoute => ({
    source: svcChatSource(client, m.chatModel, options),
    health: target(client, "chat", m),
    isFallback,
  });
  const fellBack = (endpoint: ServiceKind) => () => health.fellBack(endpoint);
  return {
    chat: new ResilientChat({
      primary: chatRoute(deps.client, models, false),
      fallback: differs("chat") ? chatRoute(fbClient, fbModels, true) : undefined,
      deadlines: d,
      hedge: resilience.hedge,
      clock,
      onHedge: () => health.hedged(),
      onFallback: fellBack("chat"),
      log: deps.log,
    }),
    asr: new ResilientRecognizer({
      primary: { port: own.asr, health: target(deps.client, "asr", models) },
      fallback:
        other && differs("asr") ? { port: other.asr, health: target(fbClient, "asr", fbModels) } : undefined,
      onFallback: fellBack("asr"),
      clock,
      asrMs: d.asrMs,
    }),
    tts: new ResilientSynthesizer({
      primary: { port: own.tts, health: target(deps.client, "tts", models) },
      fallback:
        other && differs("tts") ? { port: other.tts, health: target(fbClient, "tts", fbModels) } : undefined,
      onFallback: fellBack("tts"),
    }),
  };
}
