// A benchmark's usage is the comment it opens with: `npm run bench -- NAME --help` prints it, and
// an option it does not name is refused before anything runs. A mistyped option ("--nosie") used
// to be ignored: the run took minutes and printed figures of a set nobody asked for.
import { readFileSync } from "node:fs";

/** The `//` comment lines a benchmark's source opens with, without their slashes. */
export function usageOf(source: string): string {
  const lines: string[] = [];
  for (const line of source.split("\n")) {
    if (!line.startsWith("//")) break;
    lines.push(line.replace(/^\/\/ ?/, ""));
  }
  return lines.join("\n");
}

/** The usage of the script at `path` (usageOf its source). */
export function usageOfFile(path: string): string {
  return usageOf(readFileSync(path, "utf8"));
}

/** The options (`--name`) a usage text names. */
export function optionsOf(usage: string): Set<string> {
  return new Set(usage.match(/--[a-z][a-z0-9-]*/g) ?? []);
}

/**
 * The arguments in `args` that look like options (`--name` or `--name=value`) and that `known`
 * does not hold. A value after an option is not one: "-15", "hiss:24" and "agent.x=1" pass.
 */
export function unknownOptions(args: readonly string[], known: ReadonlySet<string>): string[] {
  return args.filter((a) => /^--[a-z]/.test(a) && !known.has(a.split("=")[0]!));
}
