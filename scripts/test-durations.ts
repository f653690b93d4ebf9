// Rewrites test/durations.json (the order test/sequencer.ts starts files in) from the results of a
// full run of the suite: `make test` (scripts/run-tests.ts keeps the suite's results in
// .vitest-suite-results.json), then `node scripts/test-durations.ts`. Files under 2 s are left out:
// their order does not change when the run ends.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2] ?? ".vitest-suite-results.json";
const results = JSON.parse(readFileSync(file, "utf8")) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
/**
 * A file's path in the repository, as test/sequencer.ts looks it up: the results may come from
 * another checkout (a fresh clone's run), whose absolute paths are not this one's.
 */
function inRepository(name: string): string {
  const at = name.indexOf("/test/");
  if (at < 0) throw new Error(`${file}: ${name} is not under a test/ directory`);
  return name.slice(at + 1);
}
const seconds = Object.fromEntries(
  results.testResults
    .map((r) => [inRepository(r.name), Math.round((r.endTime - r.startTime) / 1000)] as const)
    .filter(([, s]) => s >= 2)
    .sort((a, b) => b[1] - a[1]),
);
if (Object.keys(seconds).length < 20)
  throw new Error(`${file} holds ${results.testResults.length} files: run the whole suite first`);
writeFileSync("test/durations.json", `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(seconds).length} files of 2 s or more`);
