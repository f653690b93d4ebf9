// `voice-bridge test` as the command line has it: listed in the program's help with its own,
// and a scenario file that cannot be used stops it before any bridge starts (exit 2), naming the
// file, the key and what is wrong.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../../../../bin/voice-bridge");
const dir = mkdtempSync(join(tmpdir(), "vb-test-command-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(BIN, args, { cwd: dir }, (err, stdout, stderr) =>
      done({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("voice-bridge test", () => {
  it("is listed in the program's help, and has its own", async () => {
    expect((await cli(["--help"])).stdout).toMatch(/^ {2}test \[options\] \[files\.\.\.\] +run agent tests/m);
    const help = (await cli(["test", "--help"])).stdout;
    expect(help).toMatch(/--junit <file> +also write the results as JUnit XML/);
    expect(help).toContain("*.test.yaml");
    expect(help).toContain("SVC_BASE_URL");
  });

  it("refuses a file it cannot use before any call, naming the file, the key and what is wrong", async () => {
    writeFileSync(
      join(dir, "orders.test.yaml"),
      "agent: { greeting: Hi }\nscenarios:\n  - name: one\n    caller: [{ keys: 12x }]\n    expect: [{ tool: lookup_order, turn: 1 }]\n",
    );
    const { code, stdout, stderr } = await cli(["test"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toBe(
      [
        "voice-bridge test: orders.test.yaml:",
        "  - scenarios.0.caller.0.keys: expected keypad keys: 0-9, *, # and A-D",
        "  - scenarios.0.expect.0.turn: goes with says, not with tool",
        "",
      ].join("\n"),
    );
    expect((await cli(["test", "none.test.yaml"])).stderr).toBe(
      "voice-bridge test: none.test.yaml:\n  - no such file or folder\n",
    );
    rmSync(join(dir, "orders.test.yaml"));
    expect((await cli(["test"])).stderr).toBe(
      "voice-bridge test: .:\n  - no scenario files (*.test.yaml) in it\n",
    );
  });
});
