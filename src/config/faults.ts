// `local.faults` (SVC_LOCAL_FAULTS): the failures of a hosted service that the local service plays,
// so tests and benchmarks see what a bridge does when the service fails. Written as each kind's
// probability, with an optional seed (`chat503=0.3,asr503=0.2,ttsCut=0.2,chatStall=0.1,seed=7`);
// read into one typed value, every mistake named. The local service applies it
// (src/service/conditions/faults.ts).
import { z } from "zod";

export interface LocalFaults {
  /** E1–E3 answered 503 after the chat delay: the share of requests. */
  readonly chat503: number;
  /** E6 answered 503 as it arrives: the share of requests. */
  readonly asr503: number;
  /** E5 sessions closed (1011) right after their first audio: the share of sessions. */
  readonly ttsCut: number;
  /** E1 streams that stop after their first content chunk, the connection held: the share of streams. */
  readonly chatStall: number;
  /** Seeds the draws: the same seed gives the same faults for the same traffic. */
  readonly seed: number;
}

export const NO_FAULTS: LocalFaults = { chat503: 0, asr503: 0, ttsCut: 0, chatStall: 0, seed: 1 };

type Kind = Exclude<keyof LocalFaults, "seed">;
const KINDS: readonly Kind[] = ["chat503", "asr503", "ttsCut", "chatStall"];
const FORMS =
  "none, or parts KIND=P with KIND one of chat503, asr503, ttsCut, chatStall and P a probability 0-1 or 0-100%, and seed=N (e.g. chat503=0.3,ttsCut=0.2,seed=7)";

export class FaultsError extends Error {
  override name = "FaultsError";
}

function probability(part: string, kind: Kind, value: string): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)\s*(%?)$/.exec(value);
  const p = m ? Number(m[1]) / (m[2] ? 100 : 1) : Number.NaN;
  if (!(p >= 0 && p <= 1))
    throw new FaultsError(
      `${part}: ${kind} is a probability, expected 0-1 or 0-100% (e.g. ${kind}=0.2 or ${kind}=20%)`,
    );
  return p;
}

/** Reads a faults text; throws a FaultsError saying which part is wrong and what was expected. */
export function parseFaults(text: string): LocalFaults {
  const parts = text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new FaultsError(`empty: expected ${FORMS}`);
  if (parts.length === 1 && /^(none|off)$/i.test(parts[0]!)) return NO_FAULTS;
  const out: { -readonly [K in keyof LocalFaults]: LocalFaults[K] } = { ...NO_FAULTS };
  const seen = new Set<string>();
  for (const part of parts) {
    const m = /^(\w+)\s*=\s*(.*)$/.exec(part);
    if (!m) throw new FaultsError(`"${part}" is not KIND=P or seed=N: expected ${FORMS}`);
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (seen.has(key)) throw new FaultsError(`${m[1]} given twice in "${text}"`);
    seen.add(key);
    if (key === "seed") {
      if (!/^\d+$/.test(value) || Number(value) > 0xffffffff)
        throw new FaultsError(`${part}: expected a whole number 0-4294967295 (e.g. seed=7)`);
      out.seed = Number(value);
      continue;
    }
    const kind = KINDS.find((k) => k.toLowerCase() === key);
    if (!kind) throw new FaultsError(`${part}: unknown fault "${m[1]}": expected ${FORMS}`);
    out[kind] = probability(part, kind, value);
  }
  return out;
}

/**
 * The config key's value: a faults text (from a file, the environment or a flag); `none`/`off`/
 * `false` (which the environment reader turns into false) mean none.
 */
export const faultsValue = z
  .union([z.string(), z.boolean()])
  .default("none")
  .transform((v, ctx): LocalFaults => {
    if (v === false) return NO_FAULTS;
    try {
      if (v === true) throw new FaultsError(`true: expected ${FORMS}`);
      return parseFaults(v);
    } catch (err) {
      if (!(err instanceof FaultsError)) throw err;
      ctx.addIssue({ code: "custom", message: err.message });
      return z.NEVER;
    }
  });
