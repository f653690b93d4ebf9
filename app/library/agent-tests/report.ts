// The results as a person reads them: a line per scenario (✓ or ✗, its time), under a failed one a
// red line per unmet expectation with what the call showed instead, and the transcript; then a
// summary. Colour only where the output is a terminal (or FORCE_COLOR asks for it).
import type { ScenarioResult } from "./run.ts";

export interface FormatOptions {
  /** ANSI colours (default: none). */
  color?: boolean;
  /** The transcript of passed scenarios too (a failed one's is always shown). */
  verbose?: boolean;
}

const paint = (on: boolean, code: number, text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The lines of one scenario's result (its file's heading is the caller's to print). */
export function formatResult(r: ScenarioResult, opts: FormatOptions = {}): string[] {
  const color = opts.color === true;
  const lines = [
    `  ${paint(color, r.passed ? 32 : 31, r.passed ? "✓" : "✗")} ${r.scenario} ${paint(color, 2, `(${secs(r.durationMs)})`)}`,
  ];
  if (r.error) lines.push(paint(color, 31, `    ✗ ${r.error}`));
  for (const e of r.expectations) {
    if (e.passed) {
      if (!r.passed || opts.verbose) lines.push(`    ${paint(color, 32, "✓")} ${e.expectation}`);
      continue;
    }
    lines.push(paint(color, 31, `    ✗ ${e.expectation}${e.seen ? `: seen ${e.seen}` : ""}`));
  }
  if (!r.passed || opts.verbose)
    lines.push(
      paint(color, 2, "    the call:"),
      ...(r.transcript.length ? r.transcript : ["(no turns)"]).map((t) => paint(color, 2, `      ${t}`)),
    );
  return lines;
}

/** "12 scenarios: 11 passed, 1 failed (2 min 3 s)". */
export function summaryLine(
  results: readonly ScenarioResult[],
  ms: number,
  opts: FormatOptions = {},
): string {
  const failed = results.filter((r) => !r.passed).length;
  const time =
    ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : secs(ms);
  const text = `${results.length} scenario${results.length === 1 ? "" : "s"}: ${results.length - failed} passed, ${failed} failed (${time})`;
  return paint(opts.color === true, failed ? 31 : 32, text);
}

/** The whole report: each file's heading, its scenarios, the summary. */
export function formatResults(results: readonly ScenarioResult[], opts: FormatOptions = {}): string {
  const lines: string[] = [];
  let file: string | undefined;
  for (const r of results) {
    if (r.file !== file) {
      file = r.file;
      lines.push(file);
    }
    lines.push(...formatResult(r, opts));
  }
  lines.push(
    "",
    summaryLine(
      results,
      results.reduce((t, r) => t + r.durationMs, 0),
      opts,
    ),
  );
  return lines.join("\n");
}
