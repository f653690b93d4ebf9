// Runs the vitest suite and ends with one plain summary line ("tests: N passed, N failed,
// N skipped") that CI tooling reads, whatever reporter vitest itself uses.
// Two phases: the suite, then test/deploy alone. The deployment tests build a container image and
// run several bridges, Kamailio and SIPp: heavy enough on 2 cores to starve the real-time tests
// (paced audio, turn-taking on the real engines) if they ran beside them.
// Arguments (file filters, vitest options) go to the first phase only; with a filter naming
// test/deploy, that phase runs it and the second is skipped.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import { ERRORS_FILE, type RunError } from "../test/errors-reporter.ts";

const resultsFile = ".vitest-results.json";
/** The whole suite's results (its first phase), for scripts/test-durations.ts. */
const SUITE_RESULTS = ".vitest-suite-results.json";

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: {
    name: string;
    status: string;
    message: string;
    assertionResults: { fullName: string; status: string; failureMessages: string[] }[];
  }[];
}

interface Phase {
  status: number;
  results: VitestJson | undefined;
  errors: RunError[];
}

function phase(args: string[]): Phase {
  rmSync(resultsFile, { force: true });
  rmSync(ERRORS_FILE, { force: true });
  const run = spawnSync("npx", ["vitest", "run", ...args], { stdio: "inherit" });
  const read = <T>(file: string): T | undefined =>
    existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as T) : undefined;
  return {
    status: run.status ?? 1,
    results: read<VitestJson>(resultsFile),
    errors: read<RunError[]>(ERRORS_FILE) ?? [],
  };
}

const args = process.argv.slice(2);
const filtered = args.some((a) => !a.startsWith("-"));
const phases: Phase[] = [];
if (filtered) phases.push(phase(args));
else {
  phases.push(phase([...args, "--project", "shared", "--project", "own-process"]));
  // Kept apart from the deploy phase's: scripts/test-durations.ts orders the suite by it.
  if (existsSync(resultsFile)) copyFileSync(resultsFile, SUITE_RESULTS);
  phases.push(phase(["--project", "deploy"]));
}

// What failed, again at the very end: CI keeps only the tail of a run's output, and the reporter
// printed the failures minutes and thousands of lines earlier.
function failures(r: VitestJson): string[] {
  const lines: string[] = [];
  const firstLine = (text: string) =>
    text
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.slice(0, 300) ?? "";
  for (const file of r.testResults) {
    const name = file.name.replace(`${process.cwd()}/`, "");
    let testFailed = false;
    for (const a of file.assertionResults) {
      if (a.status !== "failed") continue;
      testFailed = true;
      lines.push(`FAILED ${name} > ${a.fullName}: ${firstLine(a.failureMessages[0] ?? "")}`);
    }
    // A file that failed with no failed test: its import or a hook threw.
    if (!testFailed && file.status === "failed")
      lines.push(
        `FAILED ${name}: ${firstLine(file.message) || "(no message; see the ERROR lines that follow)"}`,
      );
  }
  return lines;
}

if (phases.every((p) => p.results)) {
  for (const p of phases) for (const line of failures(p.results!)) console.log(line);
  for (const p of phases)
    for (const e of p.errors) console.log(`ERROR (${e.type}${e.file ? ` in ${e.file}` : ""}) ${e.text}`);
  const sum = (f: (r: VitestJson) => number) => phases.reduce((n, p) => n + f(p.results!), 0);
  console.log(
    `tests: ${sum((r) => r.numPassedTests)} passed, ${sum((r) => r.numFailedTests)} failed, ${sum((r) => r.numPendingTests + r.numTodoTests)} skipped`,
  );
} else {
  console.log("tests: no results written (vitest did not finish)");
}
process.exit(phases.find((p) => p.status !== 0)?.status ?? 0);
