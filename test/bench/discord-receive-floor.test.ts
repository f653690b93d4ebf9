import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const probe = new URL("../../bench/lib/discord-receive-floor.ts", import.meta.url).pathname;

describe("the Discord bench's receive floor", () => {
  it("decodes and runs Silero on every member's windows, and prints its CPU per member-second", () => {
    // The probe exits non-zero when Silero ran fewer windows than the members' audio holds (a floor
    // that skipped work), so a number here means the whole work ran.
    const out = execFileSync(process.execPath, [probe, "2", "1"], { encoding: "utf8", timeout: 60_000 });
    expect(out.trim()).toMatch(/^\d+$/);
    expect(Number(out)).toBeGreaterThan(0);
  }, 90_000);
});
