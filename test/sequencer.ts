// The order test files start in: longest first, from the seconds a full run took per file
// (test/durations.json, written by scripts/test-durations.ts). Three files run at a time; started
// by vitest's own fallback on a fresh checkout (largest file first, as no cache exists there), a
// short file that runs for 90 s started last and kept one worker busy alone at the end of the run.
// Files without a figure (short ones, or new) follow in vitest's own order.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

const durations = JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8")) as Record<
  string,
  number
>;

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification) =>
      durations[relative(spec.project.config.root, spec.moduleId)] ?? 0;
    const known = files.filter((f) => seconds(f) > 0).sort((a, b) => seconds(b) - seconds(a));
    const rest = await super.sort(files.filter((f) => seconds(f) === 0));
    return [...known, ...rest];
  }
}
