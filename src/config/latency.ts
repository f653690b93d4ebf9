// `local.latency` (SVC_LOCAL_LATENCY): the timing of a hosted service that the local service plays,
// so tests and benchmarks run where users are. Written as a named profile, per-stage delays or both
// (`hosted`, `asr=400,chat=550,tts=250`, `hosted,tts=300,jitter=25%,seed=7`); read into one typed
// value, every mistake named. The local service applies it (src/service/conditions/latency.ts).
import { z } from "zod";

export interface LocalLatency {
  /** `hosted` when the delays are the hosted service's medians, `custom` for others, `none` for none. */
  readonly name: "none" | "hosted" | "custom";
  /** E6: the transcript's wait after the upload's end, ms. */
  readonly asrMs: number;
  /** E1–E3: the first chunk's (or the answer's) wait after the request, ms. */
  readonly chatMs: number;
  /** E5: every server message's delay; E4: the first byte's wait after the request, ms. */
  readonly ttsMs: number;
  /** Each delay is drawn within ± this fraction of itself (0: exact). */
  readonly jitter: number;
  /** Seeds the jitter's draws: the same seed gives the same delays in the same order. */
  readonly seed: number;
}

/** The hosted service's published medians (DESIGN.md, "Real conditions"). */
export const HOSTED_LATENCY = { asrMs: 400, chatMs: 550, ttsMs: 250 } as const;

export const NO_LATENCY: LocalLatency = { name: "none", asrMs: 0, chatMs: 0, ttsMs: 0, jitter: 0, seed: 1 };

const STAGES = { asr: "asrMs", chat: "chatMs", tts: "ttsMs" } as const;
const MAX_MS = 60_000;
const FORMS =
  "hosted or none, or parts asr=MS, chat=MS, tts=MS, jitter=N%, seed=N (e.g. hosted,jitter=25%,seed=7)";

export class LatencyError extends Error {
  override name = "LatencyError";
}

/** Reads a latency text; throws a LatencyError saying which part is wrong and what was expected. */
export function parseLatency(text: string): LocalLatency {
  const parts = text
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  if (parts.length === 0) throw new LatencyError(`empty: expected ${FORMS}`);
  const seen = new Set<string>();
  const once = (key: string) => {
    if (seen.has(key)) throw new LatencyError(`${key} given twice in "${text}"`);
    seen.add(key);
  };
  let base: "none" | "hosted" | undefined;
  const ms: { asrMs?: number; chatMs?: number; ttsMs?: number } = {};
  let jitter = 0;
  let seed: number | undefined;
  for (const part of parts) {
    if (part === "none" || part === "hosted") {
      if (base) throw new LatencyError(`one profile at most: "${text}" names ${base} and ${part}`);
      base = part;
      continue;
    }
    const m = /^(\w+)\s*=\s*(.*)$/.exec(part);
    const key = m?.[1];
    const value = m?.[2] ?? "";
    if (key === "asr" || key === "chat" || key === "tts") {
      once(key);
      const v = /^(\d+)\s*(ms)?$/.exec(value);
      if (!v || Number(v[1]) > MAX_MS)
        throw new LatencyError(`${part}: expected whole milliseconds 0-${MAX_MS} (e.g. ${key}=400)`);
      ms[STAGES[key]] = Number(v[1]);
    } else if (key === "jitter") {
      once(key);
      const v = /^(\d+(?:\.\d+)?)\s*%$/.exec(value);
      if (!v || Number(v[1]) > 100)
        throw new LatencyError(`${part}: expected a percentage 0-100% of each delay (e.g. jitter=25%)`);
      jitter = Number(v[1]) / 100;
    } else if (key === "seed") {
      once(key);
      if (!/^\d+$/.test(value) || Number(value) > 0xffffffff)
        throw new LatencyError(`${part}: expected a whole number 0-4294967295 (e.g. seed=7)`);
      seed = Number(value);
    } else {
      throw new LatencyError(`"${part}" is not a profile or a part: expected ${FORMS}`);
    }
  }
  if (base === "none") {
    if (parts.length > 1) throw new LatencyError(`none takes no other parts: "${text}"`);
    return NO_LATENCY;
  }
  if (seed !== undefined && jitter === 0)
    throw new LatencyError(`seed=${seed} without jitter: a seed only chooses the jitter's draws`);
  const from = base === "hosted" ? HOSTED_LATENCY : { asrMs: 0, chatMs: 0, ttsMs: 0 };
  const asrMs = ms.asrMs ?? from.asrMs;
  const chatMs = ms.chatMs ?? from.chatMs;
  const ttsMs = ms.ttsMs ?? from.ttsMs;
  const hosted =
    asrMs === HOSTED_LATENCY.asrMs && chatMs === HOSTED_LATENCY.chatMs && ttsMs === HOSTED_LATENCY.ttsMs;
  const name = asrMs + chatMs + ttsMs === 0 ? "none" : hosted ? "hosted" : "custom";
  return { name, asrMs, chatMs, ttsMs, jitter, seed: seed ?? 1 };
}

/**
 * The config key's value: a latency text (from a file, the environment or a flag); `off`/`false`
 * (which the environment reader turns into false) mean none.
 */
export const latencyValue = z
  .union([z.string(), z.boolean()])
  .default("none")
  .transform((v, ctx): LocalLatency => {
    if (v === false) return NO_LATENCY;
    try {
      if (v === true) throw new LatencyError(`true: expected ${FORMS}`);
      return parseLatency(v);
    } catch (err) {
      if (!(err instanceof LatencyError)) throw err;
      ctx.addIssue({ code: "custom", message: err.message });
      return z.NEVER;
    }
  });
