// A change that breaks an agent is caught: the hotline example's scenario, run on a copy of its
// agent whose tool was renamed (broken-hotline/), fails with a red line naming each unmet
// expectation and what the call showed instead, in the report and in the JUnit XML; the command
// exits 1.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { userEnv } from "./user-env.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "vb-broken-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RED = "\x1b[31m";

describe("a broken agent", () => {
  it("fails its scenario with a red line naming the expectation", async () => {
    const junit = join(dir, "broken.xml");
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((done) => {
      execFile(
        join(ROOT, "bin/voice-bridge"),
        ["test", "test/examples/broken-hotline/broken-hotline.test.yaml", "--junit", junit],
        { cwd: ROOT, env: { ...userEnv(), FORCE_COLOR: "1" } },
        (err, out) => done({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout: out }),
      );
    });
    expect(code).toBe(1);
    const lines = stdout.split("\n");
    const red = (text: string) => lines.find((l) => l.startsWith(`${RED}    ✗ ${text}`));
    expect(red('calls lookup_order {"order_id":"4217"}: seen no tool calls')).toBeDefined();
    expect(red("says /\\bshipped\\b/: seen 1: ")).toContain("I can't look up orders right now.");
    // The expectations that still hold are listed as met; the call is shown.
    expect(stdout).toContain('✓\x1b[0m says "Thanks for calling Acme Bikes, Ada. How can I help?" (turn 1)');
    expect(stdout).toMatch(/agent: Let me check order 4217|agent: I can't look up orders right now/);
    expect(stdout).toMatch(/1 scenario: 0 passed, 1 failed/);
    const xml = readFileSync(junit, "utf8");
    expect(xml).toMatch(/tests="1" failures="1" errors="0"/);
    expect(xml).toContain(
      '<failure message="calls lookup_order {&quot;order_id&quot;:&quot;4217&quot;}: seen no tool calls">',
    );
  }, 120_000);
});
