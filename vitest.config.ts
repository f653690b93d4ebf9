import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Real engines (espeak-ng, PocketSphinx, onnxruntime) are slower than unit code on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // One more try for a test that fails: a real-time test on real engines and sockets can lose
    // once to a stall of this shared 2-core machine. A test that fails twice fails the run; one
    // that passed only on its second try is named at the end of the run (scripts/run-tests.ts)
    // with the first try's error, so a flaky test is seen and fixed, not hidden.
    retry: 1,
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
