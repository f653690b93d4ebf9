// The conditions of a hosted service that the local service plays on top of its own answers, so
// tests and benchmarks run where users are: its timing (latency.ts). Each condition is a value of
// its own here, configured apart and consulted by the routes at the point where a hosted service
// would show it.
import { describeLatency, Latency, type LatencyProfile } from "./latency.ts";

export type { LatencyProfile, LatencyStage, MessageSocket } from "./latency.ts";
export { describeLatency, Latency, NO_LATENCY } from "./latency.ts";

export interface ServiceConditionsOptions {
  /** Default: none. */
  latency?: LatencyProfile | undefined;
}

export interface ServiceConditions {
  readonly latency: Latency;
}

export function serviceConditions(opts: ServiceConditionsOptions = {}): ServiceConditions {
  return { latency: new Latency(opts.latency) };
}

/** The conditions in force, in words (the start-up log), or undefined when none are. */
export function describeConditions(c: ServiceConditions): Record<string, string> | undefined {
  return c.latency.active ? { latency: describeLatency(c.latency.profile) } : undefined;
}
