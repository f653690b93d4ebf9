import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Real engines (espeak-ng, PocketSphinx, onnxruntime) are slower than unit code on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two files at a time. Vitest's default on this 2-core machine is one (cores - 1), and most of the
    // suite's time is real time, not CPU: calls paced at 20 ms, rings, pauses, child processes
    // (baresip, SIPp, Kamailio, PostgreSQL, Chromium) that wait on sockets. Two halve the wall time;
    // more began to starve the paced audio of the real-time tests (a SIP call test lost its turn
    // timing at three and four).
    maxWorkers: 2,
    // Longest first, so the run does not end on one long file (test/sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
