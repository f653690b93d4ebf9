// Command-line options of the benchmarks: `--name value`, checked once, named in the error.

/** A positive number given as `--name N`, or `fallback` when the option is absent. */
export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name}: expected a positive number`);
  return v;
}

/** The value of `--name value`, or undefined when the option is absent. */
export function stringArg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}
