import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  mainThreadSchedUs,
  mainThreadWakeups,
  NODE_FLAGS,
  processRunUs,
  V8_POOL_SIZE,
} from "../../bench/lib/calls-procs.ts";

describe("calls benchmark processes", () => {
  it("runs the bridge with the Node flags bin/voice-bridge deploys", () => {
    const script = readFileSync(new URL("../../bin/voice-bridge", import.meta.url), "utf8");
    // The exec line, continuations joined: exec "$node" FLAGS… "$entry" "$@" (src/cli.ts or .js)
    const exec = script.replace(/\\\n\s*/g, "").match(/^exec "\$node" (.*) "\$entry" "\$@"$/m);
    expect(exec).not.toBeNull();
    // The helpers are sized from the cores by the script itself: its rule, run here, gives ours.
    const rule = script.match(/^cores=.*$/m)?.[0];
    expect(rule).toBeDefined();
    const pool = execFileSync("bash", ["-c", `${rule}; echo "$pool"`], { encoding: "utf8" }).trim();
    expect(Number(pool)).toBe(V8_POOL_SIZE);
    const flags = exec![1]!.trim().replace('--v8-pool-size="$pool"', `--v8-pool-size=${pool}`);
    expect(flags.split(/\s+/)).toEqual(NODE_FLAGS);
  });

  it("reads a process's CPU at the scheduler's resolution, its main thread's share within it", () => {
    const cpu0 = processRunUs(process.pid);
    const main0 = mainThreadSchedUs(process.pid).runUs;
    // About 30 ms of work on this thread: far below one clock tick's worth of steps in /proc/PID/stat.
    const u0 = process.cpuUsage();
    let spin = 0;
    while (process.cpuUsage(u0).user < 30_000) spin++;
    const cpu = processRunUs(process.pid) - cpu0;
    const main = mainThreadSchedUs(process.pid).runUs - main0;
    expect(spin).toBeGreaterThan(0);
    // The 30 ms are the process's user time: its other threads (GC, the test runner's) count in
    // them too, and took a third of them once in a loaded suite (19,996 µs on the main thread).
    expect(main).toBeGreaterThan(10_000);
    expect(cpu).toBeGreaterThanOrEqual(main);
  });

  it("counts the main thread's wake-ups: a sleep on a timer is one", async () => {
    const w0 = mainThreadWakeups(process.pid);
    for (let i = 0; i < 10; i++) await new Promise((r) => setTimeout(r, 20));
    const woken = mainThreadWakeups(process.pid) - w0;
    // Not all ten: on a loaded machine a timer can be due before the loop reaches its wait, and
    // the thread then polls without sleeping (9 of 10, seen with a container build beside the suite).
    expect(woken).toBeGreaterThanOrEqual(5);
    expect(woken).toBeLessThan(200);
  });
});
