// The service the calls speak through: the embedded local service when no SVC_BASE_URL /
// SVC_API_KEY is set (started in-process, reached over loopback), else the hosted API; the one
// client of it; and each call's session services on top of that client.
import type { CallAgent } from "../../src/agents/call-agent.ts";
import { SvcClient } from "../../src/api/client.ts";
import { type Config, usesLocalService } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import type { LocalService } from "../../src/service/index.ts";
import type { SessionServices } from "../../src/session/services.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { RequestHeaders } from "../tracing/tracing.ts";
import { svcServices } from "./svc-adapters.ts";

/** Where the client finds the service. */
export interface ServiceEndpoint {
  /** The embedded local service, when the bridge runs one. */
  readonly localService: LocalService | undefined;
  readonly baseURL: string | undefined;
  readonly apiKey: string | undefined;
  /** The local engines' refusals, for /metrics (the embedded service only). */
  readonly engineRefusals: (() => Readonly<Record<string, number>>) | undefined;
}

export async function serviceEndpoint(config: Config, log: Logger): Promise<ServiceEndpoint> {
  if (!usesLocalService(config)) {
    const { baseUrl, apiKey } = config.service;
    log.info({ baseUrl: baseUrl ?? "(client default)" }, "service: hosted API");
    return { localService: undefined, baseURL: baseUrl, apiKey, engineRefusals: undefined };
  }
  // Loaded only when used: a bridge on a hosted service never pays for the tokenizer and routes.
  const service = await import("../../src/service/index.ts");
  const { describeEngines, serviceOptionsFromConfig, startLocalService } = service;
  const { warmSpeechEngines } = await import("../../src/service/speech/engines.ts");
  const localService = await startLocalService({ ...serviceOptionsFromConfig(config.local), logger: log });
  // Load the recognizer and start the TTS workers now, not on the first caller's first words.
  await warmSpeechEngines(localService.ctx);
  log.info(
    { url: localService.url, engines: describeEngines(config.local) },
    "service: embedded local service (no SVC_BASE_URL / SVC_API_KEY set)",
  );
  return {
    localService,
    baseURL: localService.url,
    apiKey: localService.apiKeys[0],
    engineRefusals: service.engineRefusals,
  };
}

export function serviceClient(
  config: Config,
  endpoint: ServiceEndpoint,
  metrics: BridgeMetrics,
  log: Logger,
): SvcClient {
  const { baseURL, apiKey } = endpoint;
  return new SvcClient({
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    planTier: config.service.planTier,
    logger: log.child({ component: "client" }),
    backlog: { onShed: (e) => metrics.shed(e.queue, e.bytes) },
  });
}

/** Each call's services speak with its agent's voice and models (cheap: closures over the client). */
export function sessionServicesFor(
  client: SvcClient,
  wrap: ((services: SessionServices) => SessionServices) | undefined,
): (agent: CallAgent, requestHeaders?: RequestHeaders) => SessionServices {
  return (agent, requestHeaders) => {
    const services = svcServices(client, agent.models, requestHeaders);
    return wrap ? wrap(services) : services;
  };
}
