// The examples' scenario files (examples/*/*.test.yaml) as their users run them: `voice-bridge
// test` from the command line, each scenario a real call through the real bridge and the Twilio
// simulator on the local service, the results printed and written as JUnit XML. The agents are
// the examples' own modules, which import the package by name. Two files at a time (--parallel):
// their results must still print in the files' order.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { userEnv } from "./user-env.ts";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "vb-examples-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the examples' scenarios", () => {
  it("pass, each file under its own heading, with a JUnit report", async () => {
    const junit = join(dir, "examples.xml");
    const { stdout } = await run(
      join(ROOT, "bin/voice-bridge"),
      ["test", "examples", "--junit", junit, "--parallel", "2"],
      {
        cwd: ROOT,
        env: userEnv(),
      },
    ).catch((e: Error & { stdout?: string; stderr?: string }) => {
      // Its own report says which scenario and expectation failed: keep it in the failure.
      throw new Error(`${e.message}\n${e.stdout ?? ""}\n${(e.stderr ?? "").slice(-3000)}`);
    });
    const lines = stdout.split("\n");
    const files = [
      "discord-persona/persona",
      "hotline/hotline",
      "outbound-reminder/reminder",
      "router/router",
    ];
    expect(lines.filter((l) => l.startsWith("examples/"))).toEqual(
      files.map((f) => `examples/${f}.test.yaml`),
    );
    expect(lines.filter((l) => /^ {2}[✓✗] /.test(l))).toEqual([
      expect.stringMatching(/^ {2}✓ Nova rolls two dice when asked \(\d+\.\d s\)$/),
      expect.stringMatching(/^ {2}✓ Ada hears that her order has shipped /),
      expect.stringMatching(/^ {2}✓ Grace does not hear about Ada's order /),
      expect.stringMatching(/^ {2}✓ Ada hears the reminder with her appointment, and the agent hangs up /),
      expect.stringMatching(/^ {2}✓ the sales number reaches sales /),
      expect.stringMatching(/^ {2}✓ the support number reaches the support desk /),
      expect.stringMatching(/^ {2}✓ another number stays with the reception /),
      expect.stringMatching(/^ {2}✓ a blocked caller is refused /),
    ]);
    expect(stdout).toMatch(/^8 scenarios: 8 passed, 0 failed \(/m);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(
      /<testsuites name="voice-bridge test" tests="8" failures="0" errors="0" time="[\d.]+">/,
    );
    expect(xml).toContain(
      '<testcase name="Ada hears that her order has shipped" classname="examples/hotline/hotline.test.yaml"',
    );
  }, 400_000);
});
