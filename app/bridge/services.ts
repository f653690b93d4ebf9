// The service the calls speak through: the embedded local service when no SVC_BASE_URL /
// SVC_API_KEY is set (started in-process, reached over loopback), else the hosted API; the one
// client of it; and each call's session services on top of that client.
import type { CallAgent } from "../../src/agents/call-agent.ts";
import { SvcClient } from "../../src/api/client.ts";
import { type Config, usesLocalService } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { LocalService } from "../../src/service/index.ts";
import { ServiceHealth } from "../../src/session/resilience/service-health.ts";
import type { SessionServices } from "../../src/session/services.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { RequestHeaders } from "../tracing/tracing.ts";
import { FallbackClients, resilientServices } from "./resilient-services.ts";

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
  endpoint: Pick<ServiceEndpoint, "baseURL" | "apiKey">,
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

export interface CallServicesDeps {
  /** The client of the bridge's service. */
  client: SvcClient;
  config: Config;
  metrics: BridgeMetrics;
  log: Logger;
  clock: Clock;
}

/**
 * Each call's services speak with its agent's voice and models, and recover from the service's
 * failures as the agent says (hedges, fallback, deadlines: src/session/resilience), every call
 * sharing one view of the service's health. Cheap per call: closures over the clients.
 */
export function sessionServicesFor(
  deps: CallServicesDeps,
  wrap: ((services: SessionServices) => SessionServices) | undefined,
): (agent: CallAgent, requestHeaders?: RequestHeaders) => SessionServices {
  const { metrics, log, clock } = deps;
  const health = new ServiceHealth({
    clock,
    log: log.child({ component: "service-health" }),
    sink: metrics.service,
  });
  const clients = new FallbackClients((endpoint) => serviceClient(deps.config, endpoint, metrics, log));
  return (agent, requestHeaders) => {
    const services = resilientServices(
      { client: deps.client, clients, health, clock, log },
      agent,
      requestHeaders,
    );
    return wrap ? wrap(services) : services;
  };
}
