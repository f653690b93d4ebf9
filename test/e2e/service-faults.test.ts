// A bridge whose embedded local service plays a hosted service's failures (SVC_LOCAL_FAULTS) says
// so where its timing is said: on /readyz, and in what a simulated call (`voice-bridge call`)
// prints after its transcript. What the bridge does about the failures is the resilience tests'.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { runCallCommand } from "../../tools/twilio-sim/command.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

let bridge: Bridge;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-faults-"));
  const config = twilioTestConfig(dir, { SVC_LOCAL_FAULTS: "asr503=0.2,chatStall=0.1,seed=3" });
  bridge = await startTwilioTestBridge(config);
}, 60_000);
afterAll(async () => {
  await bridge.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("what a simulated call says it ran under", () => {
  it("names the embedded service's faults beside its timing", async () => {
    const ready = (await (await fetch(`${bridge.url}/readyz`)).json()) as {
      localService?: { timing?: string; faults?: string };
    };
    expect(ready.localService).toEqual({ timing: "none", faults: "asr503=0.2,chatStall=0.1 seed 3" });
    let report = "";
    await runCallCommand({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      maxSeconds: 3,
      print: (text) => {
        report += text;
      },
    });
    expect(report).toContain("ran at its own speed");
    expect(report).toContain("played failures: asr503=0.2,chatStall=0.1 seed 3 (SVC_LOCAL_FAULTS)");
  }, 30_000);
});
