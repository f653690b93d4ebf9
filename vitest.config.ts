import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Real engines (espeak-ng, PocketSphinx, onnxruntime) are slower than unit code on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // expect.poll waits on a condition; its default of one second is a timed assertion in
    // disguise. With three files at a time a browser page's live feed took longer than that to
    // connect (console-dial, 2026-12-03), so a wait gives up only after 15 s.
    expect: { poll: { timeout: 15_000 } },
    // Three files at a time. Vitest's default on this 2-core machine is one (cores - 1), and most of
    // the suite's time is real time, not CPU: calls paced at 20 ms, rings, pauses, child processes
    // (baresip, SIPp, Kamailio, PostgreSQL, Chromium) that wait on sockets. Two files at a time left
    // the cores idle half the time (CPU 0.93 of 2 over a 1,185 s suite); three ran it in 863 s with
    // CPU 1.2 of 2 and every test passing (2026-12-03; on 2026-12-01, with fewer tests, three had
    // starved the paced audio of a SIP call test). A test that loses its timing at three is a bug
    // to find (a wait on a fixed time, not its condition), not a reason to go back: the one such
    // failure since was a REGISTER refused by a Kamailio not yet listening and left waiting 32 s.
    maxWorkers: 3,
    // Longest first, so the run does not end on one long file (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    // The JSON report for scripts/run-tests.ts's summary; test/errors-reporter.ts for the errors it omits.
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }], "./test/errors-reporter.ts"],
  },
});
