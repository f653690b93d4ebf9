// `voice-bridge test [FILES]`: runs scenario files (a folder: every *.test.yaml under it; none:
// under the working directory), prints each scenario's result as it comes, writes JUnit XML with
// --junit, and says by its exit code whether all passed (0), one failed (1), or the files could
// not be used (2: every problem named by file and key).
import { readdir, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { pino } from "pino";
import { junitXml } from "./junit.ts";
import { formatResult, summaryLine } from "./report.ts";
import { runScenarios, type ScenarioResult } from "./run.ts";
import { ScenarioFileError } from "./scenario.ts";

export interface TestCommandOptions {
  /** Files and folders; none: the working directory. */
  files: readonly string[];
  /** The config file of scenario files that name none of their own (the global --config). */
  config?: string | undefined;
  junit?: string | undefined;
  verbose?: boolean | undefined;
  /** Scenario files run at once, each on a bridge of its own (default 1). */
  parallel?: number | undefined;
}

const SCENARIO_FILE = /\.test\.ya?ml$/;

/** The scenario files under `dir`, in order (dependencies and hidden folders left out). */
async function scenarioFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && SCENARIO_FILE.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .filter(
      (f) =>
        !relative(dir, f)
          .split(/[\\/]/)
          .some((part) => part === "node_modules" || part.startsWith(".")),
    )
    .sort();
}

async function expand(args: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const arg of args.length ? args : ["."]) {
    const info = await stat(arg).catch(() => undefined);
    if (!info) throw new ScenarioFileError(arg, ["no such file or folder"]);
    if (!info.isDirectory()) files.push(arg);
    else {
      const found = await scenarioFiles(arg);
      if (!found.length) throw new ScenarioFileError(arg, ["no scenario files (*.test.yaml) in it"]);
      files.push(...found.map((f) => (arg === "." ? relative(".", f) : f)));
    }
  }
  return [...new Set(files)];
}

/** Runs the command; resolves with the process's exit code. */
export async function runTestCommand(opts: TestCommandOptions): Promise<number> {
  const color =
    process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0"
      ? true
      : process.stdout.isTTY === true && !process.env.NO_COLOR;
  const print = (line: string) => process.stdout.write(`${line}\n`);
  const started = performance.now();
  let file: string | undefined;
  try {
    const files = await expand(opts.files);
    const results: ScenarioResult[] = await runScenarios(files, {
      config: opts.config,
      ...(opts.parallel !== undefined ? { parallel: opts.parallel } : {}),
      // The bridges' own words go to stderr, apart from the results.
      log: pino({ level: opts.verbose ? "warn" : "error" }, pino.destination(2)),
      onResult: (r) => {
        if (r.file !== file) {
          file = r.file;
          print(file);
        }
        for (const line of formatResult(r, { color, verbose: opts.verbose === true })) print(line);
      },
    });
    print("");
    print(summaryLine(results, performance.now() - started, { color }));
    if (opts.junit) {
      await writeFile(opts.junit, junitXml(results));
      print(`JUnit XML: ${opts.junit}`);
    }
    return results.every((r) => r.passed) ? 0 : 1;
  } catch (err) {
    if (!(err instanceof ScenarioFileError)) throw err;
    process.stderr.write(`voice-bridge test: ${err.message}\n`);
    return 2;
  }
}
