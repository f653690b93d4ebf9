// `npm run bench -- NAME` (bench/run.ts): `--help` prints the benchmark's opening comment, and an
// option that comment does not name is refused at once, before minutes of a run nobody asked for.
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { optionsOf, unknownOptions, usageOf } from "../../bench/lib/usage.ts";

const run = promisify(execFile);
const BENCH = join(import.meta.dirname, "../../bench");

/** bench/run.ts with `args`: its exit code and output. */
async function bench(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(BENCH, "run.ts"), ...args]);
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("bench usage", () => {
  it("reads a benchmark's usage from the comment it opens with, and the options it names", () => {
    const source =
      "// `bench -- x [--calls N] [--tls]`:\n//   --keep keeps logs\nimport a from 'b';\n// --late\n";
    const usage = usageOf(source);
    expect(usage).toBe("`bench -- x [--calls N] [--tls]`:\n  --keep keeps logs");
    expect([...optionsOf(usage)].sort()).toEqual(["--calls", "--keep", "--tls"]);
  });

  it("takes values after options for values, and refuses options it does not know", () => {
    const known = new Set(["--noise", "--gain", "--set"]);
    expect(unknownOptions(["--noise", "hiss:24", "--gain", "-15", "--set", "agent.x=--y"], known)).toEqual(
      [],
    );
    expect(unknownOptions(["--nosie", "babble:16", "--gain=3", "--draw=2"], known)).toEqual([
      "--nosie",
      "--draw=2",
    ]);
  });

  it("names every option each benchmark reads in the comment it opens with", () => {
    for (const f of readdirSync(BENCH).filter((n) => n.endsWith(".ts") && n !== "run.ts")) {
      const source = readFileSync(join(BENCH, f), "utf8");
      const read = [
        ...source.matchAll(/[aA]rg\("([a-z][a-z0-9-]*)"/g),
        ...source.matchAll(/argv\.includes\("--([a-z][a-z0-9-]*)"\)/g),
      ].map((m) => `--${m[1]}`);
      const named = optionsOf(usageOf(source));
      expect({ bench: f, unnamed: read.filter((o) => o !== "--help" && !named.has(o)) }).toEqual({
        bench: f,
        unnamed: [],
      });
    }
  });

  it("prints a benchmark's usage for --help, and refuses a mistyped option before running", async () => {
    const help = await bench("turns", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--noise KIND:DB");
    const typo = await bench("turns", "--nosie", "babble:16,hiss:24");
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("bench turns: unknown option --nosie");
    expect(typo.stderr).toContain("--noise");
    expect(typo.stdout).toBe("");
  });
});
