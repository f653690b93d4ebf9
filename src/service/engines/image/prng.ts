// Seeded pseudo-random numbers for the procedural engine: the seed material (prompt, seed, …) is
// hashed with SHA-256 into the state of sfc32, so the same inputs give the same picture on any
// machine and any run, and a one-character change gives an unrelated one.
import { createHash } from "node:crypto";

export type Random = () => number;

/** A generator of floats in [0, 1) determined by `parts`. */
export function seededRandom(...parts: ReadonlyArray<string | number>): Random {
  const h = createHash("sha256").update(JSON.stringify(parts)).digest();
  let a = h.readUInt32LE(0);
  let b = h.readUInt32LE(4);
  let c = h.readUInt32LE(8);
  let d = h.readUInt32LE(12);
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // mix the state before use
  return next;
}

/** An integer in [lo, hi]. */
export function randInt(rand: Random, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}
