// What vitest's JSON report leaves out, for scripts/run-tests.ts to print at the end of the run: the
// errors no test owns (a worker that died, an unhandled rejection, a hook's failure), each with its
// file and the top of its stack. A test file whose worker died mid-hook shows in the JSON report
// only as "failed" with an empty message (CI, 2026-12-06), and CI keeps only the tail of the output.
import { writeFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, SerializedError, TestModule } from "vitest/node";

export const ERRORS_FILE = ".vitest-errors.json";

export interface RunError {
  /** "Unhandled Rejection", "Unhandled Error", …; "file" for a module's own error (its import, a hook); "unfinished". */
  type: string;
  file: string | undefined;
  text: string;
}

const STACK_LINES = 6;

function describe(e: SerializedError): string {
  const head = `${e.name ?? "Error"}: ${e.message || "(no message)"}`;
  const stack = (e.stack ?? "")
    .split("\n")
    .filter((l) => l.trim().startsWith("at "))
    .slice(0, STACK_LINES)
    .map((l) => `    ${l.trim()}`);
  const cause = e.cause ? [`  cause: ${describe(e.cause)}`] : [];
  return [head, ...stack, ...cause].join("\n");
}

export default class ErrorsReporter implements Reporter {
  #root = process.cwd();

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    const errors: RunError[] = [];
    for (const e of unhandled) {
      const path = e.VITEST_TEST_PATH;
      errors.push({
        type: typeof e.type === "string" ? e.type : "Unhandled Error",
        file: typeof path === "string" ? relative(this.#root, path) : undefined,
        text: describe(e),
      });
    }
    for (const m of modules) {
      const file = relative(this.#root, m.moduleId);
      for (const e of m.errors()) errors.push({ type: "file", file, text: describe(e) });
      if (m.state() === "pending" || m.state() === "queued")
        errors.push({ type: "unfinished", file, text: "the file never finished (its worker stopped?)" });
    }
    writeFileSync(ERRORS_FILE, JSON.stringify(errors, null, 1));
  }
}
