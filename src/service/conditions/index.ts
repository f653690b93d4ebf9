// The conditions of a hosted service that the local service plays on top of its own answers, so
// tests and benchmarks run where users are: its timing (latency.ts) and its failures (faults.ts).
// Each condition is a value of its own here, configured apart and consulted by the routes at the
// point where a hosted service would show it.
import { describeFaults, type FaultProfile, Faults } from "./faults.ts";
import { describeLatency, Latency, type LatencyProfile } from "./latency.ts";

export type { FaultKind, FaultProfile } from "./faults.ts";
export {
  cutAfterFirstAudio,
  describeFaults,
  FAULT_KINDS,
  Faults,
  heldUntilGone,
  NO_FAULTS,
  overloaded,
  STALL_MAX_MS,
} from "./faults.ts";
export type { LatencyProfile, LatencyStage, MessageSocket } from "./latency.ts";
export { describeLatency, Latency, NO_LATENCY } from "./latency.ts";

export interface ServiceConditionsOptions {
  /** Default: none. */
  latency?: LatencyProfile | undefined;
  /** Default: none. */
  faults?: FaultProfile | undefined;
}

export interface ServiceConditions {
  readonly latency: Latency;
  readonly faults: Faults;
}

export function serviceConditions(opts: ServiceConditionsOptions = {}): ServiceConditions {
  return { latency: new Latency(opts.latency), faults: new Faults(opts.faults) };
}

/** The conditions in force, in words (the start-up log), or undefined when none are. */
export function describeConditions(c: ServiceConditions): Record<string, string> | undefined {
  const said: Record<string, string> = {};
  if (c.latency.active) said.latency = describeLatency(c.latency.profile);
  if (c.faults.active) said.faults = describeFaults(c.faults.profile);
  return Object.keys(said).length > 0 ? said : undefined;
}
