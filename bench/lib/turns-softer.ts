// `--softer DB` (the turns bench with --noise, turns-gate): every caller who speaks over the agent's
// reply (a backchannel, an interruption) says it DB softer than they asked their question, as one
// caller's utterances differ by several dB (a soft "wait" after a loud question). The room stays
// where it was against the question: only the caller's own voice is softer. The gate learns the
// caller's level from their question, and must not take their softer voice for the room's.
import { gain } from "./turns-audio.ts";
import { CALL_RATE, type TurnCase } from "./turns-cases.ts";

const samplesAt = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** `--softer`'s value: how much softer, dB (0: as they asked it; undefined: no --softer). */
export function parseSofter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const db = Number(value);
  if (value.trim() === "" || !Number.isFinite(db) || db < 0 || db > 30)
    throw new Error(
      `--softer wants how many dB softer the callers speak over the agent (0–30, e.g. 6), got ${value}`,
    );
  return db;
}

/**
 * The caller's side of `c` (before the room is laid under it) with its labelled sound `db`
 * softer, where the caller asked a question first (over-the-reply cases); else as it was.
 */
export function softerOverReply(c: TurnCase, db: number): Int16Array {
  if (db === 0 || c.questionStartMs === undefined) return c.caller;
  const from = samplesAt(c.startMs);
  const out = Int16Array.from(c.caller);
  out.set(gain(c.caller.subarray(from, samplesAt(c.endMs)), -db), from);
  return out;
}
