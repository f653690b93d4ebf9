// test/durations.json orders the suite (test/sequencer.ts): a key that names no test file orders
// nothing, and the run falls back to vitest's own order, ending on whichever long file starts last.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

describe("test/durations.json", () => {
  it("names test files of this repository, by their path in it", () => {
    const durations = JSON.parse(readFileSync(join(ROOT, "test/durations.json"), "utf8")) as Record<
      string,
      number
    >;
    const keys = Object.keys(durations);
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter((k) => !k.startsWith("test/") || !existsSync(join(ROOT, k)))).toEqual([]);
  });

  it("is written from another checkout's results by the files' paths in the repository", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vb-durations-"));
    const results = join(dir, "results.json");
    const files = Array.from({ length: 21 }, (_, i) => ({
      name: `/tmp/some-clone/test/e2e/f${i}.test.ts`,
      startTime: 0,
      endTime: (i + 2) * 1000,
    }));
    writeFileSync(results, JSON.stringify({ testResults: files }));
    // Run in a copy of the layout: the script writes test/durations.json under its working directory.
    const cwd = join(dir, "repo");
    mkdirSync(join(cwd, "test"), { recursive: true });
    await run(process.execPath, [join(ROOT, "scripts/test-durations.ts"), results], { cwd });
    const written = JSON.parse(readFileSync(join(cwd, "test/durations.json"), "utf8")) as Record<
      string,
      number
    >;
    expect(Object.keys(written)[0]).toBe("test/e2e/f20.test.ts");
    expect(written["test/e2e/f0.test.ts"]).toBe(2);
  });
});
