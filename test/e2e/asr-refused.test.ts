// A call through the real bridge whose embedded local service refuses every recognition (E6 503,
// SVC_LOCAL_FAULTS asr503=1), driven by the Twilio simulator over real sockets. The bridge asks
// again with the audio it holds, and when that is refused too the caller hears the apology: once
// for each of their turns, whole, and the call goes on to their next words.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { silentLogger } from "../../src/core/log.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const APOLOGY = DEFAULT_SESSION_CONFIG.apologyText;

let bridge: Bridge;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-asr-refused-"));
  const config = twilioTestConfig(join(dir, "bridge"), { SVC_LOCAL_FAULTS: "asr503=1" });
  bridge = await startTwilioTestBridge(config, {}, silentLogger);
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("a call whose every recognition is refused", () => {
  it("apologizes once for each of the caller's turns, whole, and goes on listening", async () => {
    // (No words are needed: nothing is ever recognized.)
    const say = (text: string) => ({ samples: speak(text, { rate: 8000 }), rate: 8000, label: text });
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      says: [say("What are your opening hours?"), say("Where are you located?")],
      maxSeconds: 60,
    });
    const record = r.transcript as CallRecord | undefined;
    const turns = (record?.turns ?? []) as TurnView[];
    const said = turns.filter((t): t is Extract<TurnView, { role: "assistant" }> => t.role === "assistant");
    const apologies = said.filter((t) => t.generated === APOLOGY);
    expect(r.turns).toHaveLength(2);
    expect(turns.filter((t) => t.role === "user")).toEqual([]);
    // One apology for each turn, heard to its end (no second one for the same turn).
    expect(apologies).toHaveLength(2);
    for (const a of apologies) {
      expect(a.interrupted).toBe(false);
      expect(a.heard).toBe(APOLOGY);
    }
    // After each of the caller's turns, the agent's voice came back (the apology, then listening).
    for (const turn of r.turns) expect(r.mediaReceivedMs.some((t) => t > turn.endMs)).toBe(true);
    // Each turn was asked for three times: the streamed upload and the held audio sent twice more.
    expect(bridge.localService!.faults().asr503).toBeGreaterThanOrEqual(2 * 3);
    expect(record?.endReason).not.toMatch(/error|failed/i);
  }, 90_000);
});
