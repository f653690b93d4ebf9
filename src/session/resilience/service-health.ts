// How the service's targets are doing, shared by every call of the bridge (one instance, made by
// app/bridge): each target's circuit, and what the operator sees of failures: a counter per
// endpoint and kind, one warn line when a target starts failing and one info line when it has
// answered again for a while (not one per request), the circuits' states.
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { CircuitBreaker, type CircuitSettings, type CircuitState } from "./circuit-breaker.ts";
import { type FailureKind, messageOf } from "./failure.ts";

export type ServiceKind = "chat" | "asr" | "tts";

/** Where a request goes: one endpoint of one service, with one model. */
export interface ServiceTarget {
  readonly endpoint: ServiceKind;
  /** The service's root (`(default)` when the client's own). */
  readonly baseUrl: string;
  readonly model: string;
}

/** The target as metrics and logs name it. */
export function targetLabel(t: ServiceTarget): string {
  return `${t.model}@${t.baseUrl}`;
}

/** What the health tells the metrics (app/metrics/service-metrics.ts implements it). */
export interface HealthSink {
  failure(endpoint: ServiceKind, kind: FailureKind): void;
  hedge(): void;
  fallback(endpoint: ServiceKind): void;
  circuit(endpoint: ServiceKind, target: string, state: CircuitState): void;
}

/** One target as the call's recovery uses it: its circuit, and where its outcomes are told. */
export interface TargetHealth {
  readonly target: ServiceTarget;
  /** May a request go there now (its circuit closed, or this one is the probe)? */
  allow(): boolean;
  succeeded(): void;
  failed(kind: FailureKind, err?: unknown): void;
  /** A request let through ended unreported (aborted by us): frees a probe's slot. */
  abandoned(): void;
}

/**
 * A failure episode: from a target's first failure to its first success after EPISODE_QUIET_MS
 * without one. Answers in between (a service failing one request in three) do not end it, so the
 * log says "failing" once for a bad spell, not once per failed request.
 */
interface Episode {
  since: number;
  failures: number;
  lastFailureAt: number;
}

export const EPISODE_QUIET_MS = 10_000;

class Target implements TargetHealth {
  readonly target: ServiceTarget;
  readonly breaker: CircuitBreaker;
  episode: Episode | undefined;
  readonly #health: ServiceHealth;

  constructor(health: ServiceHealth, target: ServiceTarget, breaker: (t: Target) => CircuitBreaker) {
    this.#health = health;
    this.target = target;
    this.breaker = breaker(this);
  }

  allow(): boolean {
    return this.breaker.allow();
  }

  succeeded(): void {
    this.breaker.succeeded();
    this.#health.recovered(this);
  }

  failed(kind: FailureKind, err?: unknown): void {
    this.breaker.failed();
    this.#health.failure(this, kind, err);
  }

  abandoned(): void {
    this.breaker.abandoned();
  }
}

export class ServiceHealth {
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #sink: HealthSink | undefined;
  readonly #targets = new Map<string, Target>();

  constructor(deps: { clock: Clock; log: Logger; sink?: HealthSink | undefined }) {
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#sink = deps.sink;
  }

  /**
   * The target's health, made at its first use with `circuit` (the settings of the first agent
   * that uses a target hold for it: every call to it shares one circuit).
   */
  target(target: ServiceTarget, circuit: CircuitSettings): TargetHealth {
    const key = `${target.endpoint} ${targetLabel(target)}`;
    let t = this.#targets.get(key);
    if (!t) {
      t = new Target(
        this,
        target,
        (self) => new CircuitBreaker(this.#clock, circuit, (s) => this.#circuit(self, s)),
      );
      this.#targets.set(key, t);
    }
    return t;
  }

  /** A second request was started beside a late one. */
  hedged(): void {
    this.#sink?.hedge();
  }

  /** A request went to the agent's fallback instead of (or beside) its own target. */
  fellBack(endpoint: ServiceKind): void {
    this.#sink?.fallback(endpoint);
  }

  /** The state of each target's circuit (for /readyz-like views and tests). */
  circuits(): { endpoint: ServiceKind; target: string; state: CircuitState }[] {
    return [...this.#targets.values()].map((t) => ({
      endpoint: t.target.endpoint,
      target: targetLabel(t.target),
      state: t.breaker.state,
    }));
  }

  failure(t: Target, kind: FailureKind, err: unknown): void {
    this.#sink?.failure(t.target.endpoint, kind);
    const now = this.#clock.now();
    if (t.episode) {
      t.episode.failures++;
      t.episode.lastFailureAt = now;
      return;
    }
    t.episode = { since: now, failures: 1, lastFailureAt: now };
    this.#log.warn(
      {
        endpoint: t.target.endpoint,
        target: targetLabel(t.target),
        kind,
        ...(err === undefined ? {} : { err: messageOf(err) }),
      },
      "service failing: its requests are retried, hedged or sent to the fallback (said once until it recovers)",
    );
  }

  recovered(t: Target): void {
    const e = t.episode;
    const now = this.#clock.now();
    if (!e || now - e.lastFailureAt < EPISODE_QUIET_MS) return;
    t.episode = undefined;
    this.#log.info(
      {
        endpoint: t.target.endpoint,
        target: targetLabel(t.target),
        failures: e.failures,
        forMs: Math.round(e.lastFailureAt - e.since),
      },
      "service recovered: it answers again",
    );
  }

  #circuit(t: Target, state: CircuitState): void {
    this.#sink?.circuit(t.target.endpoint, targetLabel(t.target), state);
    const fields = { endpoint: t.target.endpoint, target: targetLabel(t.target) };
    if (state === "open")
      this.#log.warn(
        fields,
        "service circuit open: calls skip the target while it lasts (to the fallback, when the agent has one)",
      );
    else if (state === "closed") this.#log.info(fields, "service circuit closed: the target answers again");
    else this.#log.debug(fields, "service circuit half-open: one request probes the target");
  }
}
