// Command-line options of the benchmarks: `--name value`, checked once, named in the error.

/**
 * A positive number given as `--name N` (or zero, with `{ zero: true }`: an option where 0 turns
 * something off), or `fallback` when the option is absent.
 */
export function numberArg(name: string, fallback: number, o: { zero?: boolean } = {}): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const raw = process.argv[i + 1];
  const v = Number(raw);
  if (raw === undefined || raw.trim() === "" || !Number.isFinite(v) || v < 0 || (v === 0 && !o.zero))
    throw new Error(
      `--${name}: expected a ${o.zero ? "number, 0 or more" : "positive number"}, got ${JSON.stringify(raw ?? "")}`,
    );
  return v;
}

/** The value of `--name value`, or undefined when the option is absent. */
export function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
