// The service's failures as the operator sees them on /metrics (#54): failed requests by endpoint
// and kind, hedged requests, requests sent to an agent's fallback, and each target's circuit.
import { Counter, Gauge, type Registry } from "prom-client";
import type { CircuitState } from "../../src/session/resilience/circuit-breaker.ts";
import type { FailureKind } from "../../src/session/resilience/failure.ts";
import type { HealthSink, ServiceKind } from "../../src/session/resilience/service-health.ts";

const CIRCUIT_VALUE: Record<CircuitState, number> = { closed: 0, "half-open": 1, open: 2 };

export class ServiceMetrics implements HealthSink {
  readonly #failures: Counter<"endpoint" | "kind">;
  readonly #hedges: Counter;
  readonly #fallbacks: Counter<"endpoint">;
  readonly #circuit: Gauge<"endpoint" | "target">;

  constructor(registry: Registry) {
    this.#failures = new Counter({
      name: "voice_bridge_service_failures_total",
      help: "requests to the service that failed, by endpoint (chat, asr, tts) and kind (status_503, status_429, status_5xx, timeout, stall, closed, connection, refused, error_event, other)",
      labelNames: ["endpoint", "kind"],
      registers: [registry],
    });
    this.#hedges = new Counter({
      name: "voice_bridge_service_hedges_total",
      help: "second chat requests started because the first had not answered within its deadline",
      registers: [registry],
    });
    this.#fallbacks = new Counter({
      name: "voice_bridge_service_fallbacks_total",
      help: "requests sent to an agent's fallback (model, voice or base URL), by endpoint",
      labelNames: ["endpoint"],
      registers: [registry],
    });
    this.#circuit = new Gauge({
      name: "voice_bridge_service_circuit_state",
      help: "each service target's circuit: 0 closed, 1 half-open (one probe let through), 2 open (skipped for the fallback)",
      labelNames: ["endpoint", "target"],
      registers: [registry],
    });
  }

  failure(endpoint: ServiceKind, kind: FailureKind): void {
    this.#failures.inc({ endpoint, kind });
  }

  hedge(): void {
    this.#hedges.inc();
  }

  fallback(endpoint: ServiceKind): void {
    this.#fallbacks.inc({ endpoint });
  }

  circuit(endpoint: ServiceKind, target: string, state: CircuitState): void {
    this.#circuit.set({ endpoint, target }, CIRCUIT_VALUE[state]);
  }
}
