// The results as JUnit XML, which CI systems (GitHub Actions reporters, GitLab, Jenkins) read: a
// <testsuite> per scenario file, a <testcase> per scenario, a <failure> naming each unmet
// expectation and what was seen, an <error> for a call that could not be made, the call's
// transcript as the case's <system-out>.
import type { ScenarioResult } from "./run.ts";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** Text for XML: escaped, and without the control characters XML 1.0 cannot carry. */
function xml(text: string): string {
  const allowed = (c: string) => c >= " " || c === "\t" || c === "\n" || c === "\r";
  return [...text]
    .filter(allowed)
    .join("")
    .replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function testcase(r: ScenarioResult): string {
  const open = `    <testcase name="${xml(r.scenario)}" classname="${xml(r.file)}" time="${seconds(r.durationMs)}"`;
  const body: string[] = [];
  if (r.error) body.push(`      <error message="${xml(r.error)}"/>`);
  const failed = r.expectations.filter((e) => !e.passed);
  if (failed.length) {
    const lines = failed.map((e) => `${e.expectation}${e.seen ? `: seen ${e.seen}` : ""}`);
    body.push(`      <failure message="${xml(lines[0]!)}">${xml(lines.join("\n"))}</failure>`);
  }
  if (r.transcript.length) body.push(`      <system-out>${xml(r.transcript.join("\n"))}</system-out>`);
  return body.length ? `${open}>\n${body.join("\n")}\n    </testcase>` : `${open}/>`;
}

export function junitXml(results: readonly ScenarioResult[]): string {
  const files = [...new Set(results.map((r) => r.file))];
  const count = (rs: readonly ScenarioResult[]) => ({
    tests: rs.length,
    failures: rs.filter((r) => !r.error && !r.passed).length,
    errors: rs.filter((r) => r.error).length,
    time: seconds(rs.reduce((t, r) => t + r.durationMs, 0)),
  });
  const attrs = (c: ReturnType<typeof count>) =>
    `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" time="${c.time}"`;
  const suites = files.map((file) => {
    const rs = results.filter((r) => r.file === file);
    return `  <testsuite name="${xml(file)}" ${attrs(count(rs))}>\n${rs.map(testcase).join("\n")}\n  </testsuite>`;
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="voice-bridge test" ${attrs(count(results))}>\n${suites.join("\n")}\n</testsuites>\n`;
}
