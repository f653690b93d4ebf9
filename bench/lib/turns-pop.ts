// `--pop MS` (the turns bench, turns-gate): every call's line opens with a pop MS into the call,
// 8 ms of noise 6 dB under full scale, as a line can click as it is answered. What sounds as the
// call connects is learned as the room's; a pop must not be (CallerFrames.popAt), or it bars
// the caller's first words. Every case gets it, coughs too: it is the line's, not the caller's.
import { noise } from "../../test/helpers/noise.ts";
import { mixPcm } from "../../test/helpers/speech.ts";
import { CALL_RATE, type TurnCase } from "./turns-cases.ts";

/** The pop's length, ms, and its level (RMS), dBFS. */
export const POP_MS = 8;
export const POP_DBFS = -6;

/** `--pop`'s value: where the pop comes, ms into the call (undefined: no --pop). */
export function parsePop(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0) throw new Error(`--pop wants ms into the call (e.g. 0), got ${value}`);
  return ms;
}

/** `c` with its line popping `atMs` into the call. */
export function withPop(c: TurnCase, atMs: number): TurnCase {
  const at = Math.round((atMs * CALL_RATE) / 1000);
  return { ...c, caller: mixPcm(c.caller, noise(POP_MS, CALL_RATE, { dbfs: POP_DBFS, seed: 9 }), at) };
}
