import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // Real engines (espeak-ng, PocketSphinx, onnxruntime) are slower than unit code on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default", ["json", { outputFile: ".vitest-results.json" }]],
  },
});
