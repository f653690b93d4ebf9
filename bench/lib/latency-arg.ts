// `--latency PROFILE` of the benchmarks that run calls (`turns`, `calls`): the hosted service's
// timing their local service plays (local.latency, docs/local-service.md), `none` when absent.
// Always passed on explicitly, so a SVC_LOCAL_LATENCY left in the shell never applies unsaid.
import { LatencyError, type LocalLatency, parseLatency } from "../../src/config/latency.ts";
import { describeLatency } from "../../src/service/conditions/latency.ts";
import { stringArg } from "./args.ts";

export interface BenchLatency {
  profile: LocalLatency;
  /** What the JSON line says it ran under (`none`, `hosted: asr=400,chat=550,tts=250 ms`). */
  description: string;
  /** The local service's environment for it. */
  env: { SVC_LOCAL_LATENCY: string };
}

export function latencyArg(): BenchLatency {
  const text = stringArg("latency") ?? "none";
  let profile: LocalLatency;
  try {
    profile = parseLatency(text);
  } catch (err) {
    if (err instanceof LatencyError) throw new Error(`--latency: ${err.message}`);
    throw err;
  }
  return { profile, description: describeLatency(profile), env: { SVC_LOCAL_LATENCY: text } };
}
