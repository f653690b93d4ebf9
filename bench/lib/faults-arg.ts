// `--faults SPEC` of the benchmarks that run calls (`turns`, `calls`): the hosted service's failures
// their local service plays (local.faults, docs/local-service.md), `none` when absent. Always
// passed on explicitly, so a SVC_LOCAL_FAULTS left in the shell never applies unsaid.
import { FaultsError, type LocalFaults, parseFaults } from "../../src/config/faults.ts";
import { describeFaults, FAULT_KINDS, type FaultKind } from "../../src/service/conditions/faults.ts";
import { stringArg } from "./args.ts";

export interface BenchFaults {
  profile: LocalFaults;
  /** What the JSON line says it ran under (`none`, `chat503=0.3,… seed 1`). */
  description: string;
  /** The local service's environment for it. */
  env: { SVC_LOCAL_FAULTS: string };
}

export function faultsArg(): BenchFaults {
  const text = stringArg("faults") ?? "none";
  let profile: LocalFaults;
  try {
    profile = parseFaults(text);
  } catch (err) {
    if (err instanceof FaultsError) throw new Error(`--faults: ${err.message}`);
    throw err;
  }
  return { profile, description: describeFaults(profile), env: { SVC_LOCAL_FAULTS: text } };
}

type FaultCounts = Readonly<Record<FaultKind, number>>;

/**
 * Faults an in-process local service played since the last call (since this one, the first time),
 * per kind; null without a local service.
 */
export function faultCounter(service: { faults(): FaultCounts } | undefined): () => FaultCounts | null {
  let last = service?.faults();
  return () => {
    if (!service || !last) return null;
    const now = service.faults();
    const since = Object.fromEntries(FAULT_KINDS.map((k) => [k, now[k] - last![k]])) as FaultCounts;
    last = now;
    return since;
  };
}

/** Faults a local service's JSON log at debug level says it played ("playing a fault"), per kind, within [from, to]. */
export function faultsInLog(log: string, [from, to]: [number, number]): FaultCounts {
  const out: Record<FaultKind, number> = { chat503: 0, asr503: 0, ttsCut: 0, chatStall: 0 };
  for (const line of log.split("\n")) {
    if (!line.includes('"playing a fault"')) continue;
    let e: { fault?: unknown; time?: unknown };
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof e.time !== "number" || e.time < from || e.time > to) continue;
    if ((FAULT_KINDS as readonly unknown[]).includes(e.fault)) out[e.fault as FaultKind]++;
  }
  return out;
}
