// Runs the vitest suite and ends with one plain summary line ("tests: N passed, N failed,
// N skipped") that CI tooling reads, whatever reporter vitest itself uses.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";

const resultsFile = ".vitest-results.json";
rmSync(resultsFile, { force: true });
const run = spawnSync("npx", ["vitest", "run", ...process.argv.slice(2)], { stdio: "inherit" });

interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
}
if (existsSync(resultsFile)) {
  const r = JSON.parse(readFileSync(resultsFile, "utf8")) as VitestJson;
  console.log(
    `tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`,
  );
} else {
  console.log("tests: no results written (vitest did not finish)");
}
process.exit(run.status ?? 1);
