import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/sequencer.ts";

/**
 * Test files that share their worker with the next (isolate: false): the session, codecs,
 * configuration and agent units, whose objects are their own. Files that start servers, bridges,
 * clients with module-wide state (a fetch dispatcher, the fake Discord's trust) keep a process each:
 * shared, the local service's tests and the Discord bot's failed in a whole run (2026-12-07).
 */
const SHARED = [
  "test/session/**/*.test.ts",
  // Not the one that counts the threads its model load starts: none are new once another file loaded it.
  "test/codecs/!(silero-worker-priority).test.ts",
  "test/config/**/*.test.ts",
  "test/core/**/*.test.ts",
  "test/docs/**/*.test.ts",
  "test/scripts/**/*.test.ts",
  "test/agents/*.test.ts",
  "test/layering.test.ts",
];

/** The deployment's tests. */
const DEPLOY = "test/deploy/**/*.test.ts";

/** What every file runs with, in any project below. */
const EACH_FILE = {
  globalSetup: ["test/global-setup.ts"],
  // Real engines (espeak-ng, PocketSphinx, onnxruntime) are slower than unit code on a 2-core machine.
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // expect.poll waits on a condition; its default of one second is a timed assertion in
  // disguise. With three files at a time a browser page's live feed took longer than that to
  // connect (console-dial, 2026-12-03), so a wait gives up only after 15 s.
  expect: { poll: { timeout: 15_000 } },
};

export default defineConfig({
  test: {
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
    // The units share their worker with the next file (SHARED): a fresh process per file spent
    // more CPU importing the source than the 208 files under 2 s spent testing (86 s for them
    // alone, 40 s shared; 2026-12-07), and on 2 cores that CPU came from the paced calls.
    projects: [
      {
        test: {
          ...EACH_FILE,
          name: "shared",
          include: SHARED,
          exclude: ["**/node_modules/**"],
          isolate: false,
        },
      },
      {
        test: {
          ...EACH_FILE,
          name: "own-process",
          include: ["test/**/*.test.ts"],
          exclude: [...SHARED, DEPLOY, "**/node_modules/**"],
        },
      },
      // scripts/run-tests.ts runs it alone, after the others (`--project deploy`): it builds an
      // image and runs several bridges, Kamailio and SIPp, enough to starve the paced calls.
      { test: { ...EACH_FILE, name: "deploy", include: [DEPLOY] } },
    ],
  },
});
