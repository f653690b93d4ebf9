// The recording option end to end: the real bridge (AGENT_RECORDING_DIR set) and the real local
// service (espeak-ng, PocketSphinx, the scripted hotline), one short call from the simulator.
// The WAV left in the directory must hold the caller on the left and what the caller heard on
// the right, matching the simulator's own record of the call.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { levelDbfs } from "../../codecs/pcm.ts";
import { parseWav } from "../../codecs/wav.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { speak } from "../helpers/speech.ts";
import { splitStereo } from "../helpers/stereo.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

let dir: string;
let bridge: Bridge;
const hangups: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-rec-"));
  const config = twilioTestConfig(join(dir, "data"), {
    SVC_HOTWORDS: "goodbye,bye,thanks,that's all",
    AGENT_RECORDING_DIR: join(dir, "recordings"),
  });
  expect(config.agent.recordingDir).toBe(join(dir, "recordings"));
  bridge = await startTwilioTestBridge(config, {
    callControl: {
      async updateTwiml(callSid) {
        hangups.push(callSid);
      },
    },
  });
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

/** Loud or not, per 10 ms window. */
function envelope(pcm: Int16Array, rate = 8000): boolean[] {
  const win = rate / 100;
  const out: boolean[] = [];
  for (let at = 0; at + win <= pcm.length; at += win) out.push(levelDbfs(pcm.subarray(at, at + win)) > -40);
  return out;
}

/**
 * Best share of agreeing windows between two envelopes, shifting `b` by up to ±`maxShift` windows.
 * A window of `a` agrees when `b` has its value within ±`slack` windows of the shifted place: the
 * simulator plays what it received from its next 20 ms frame on, so each reply lands on its side
 * up to two windows later than the bridge handed it over, by an amount of its own.
 */
function agreement(a: boolean[], b: boolean[], maxShift = 10, slack = 2): { share: number; shift: number } {
  let best = { share: 0, shift: 0 };
  // Nearest shifts first, so that among equally good ones the smallest wins.
  for (let k = 0; k <= 2 * maxShift; k++) {
    const shift = k % 2 === 0 ? k / 2 : -(k + 1) / 2;
    let same = 0;
    for (let i = 0; i < a.length; i++) {
      for (let j = i + shift - slack; j <= i + shift + slack; j++) {
        if (a[i] === (b[j] ?? false)) {
          same++;
          break;
        }
      }
    }
    if (same / a.length > best.share) best = { share: same / a.length, shift };
  }
  return best;
}

describe("a recorded call through the bridge", () => {
  it("leaves <recordingDir>/<callSid>.wav with the caller left and the agent as heard right", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      authToken: AUTH_TOKEN,
      says: [{ samples: speak("That's all, goodbye.", { rate: 8000 }), rate: 8000 }],
      maxSeconds: 30,
    });
    expect((r.transcript as CallRecord).endReason).toBe("agent: caller said goodbye");
    expect(hangups).toContain(r.callSid);
    // The session ended with the hang-up, and the bridge's shutdown completes every file.
    await bridge.close(0);

    const path = join(dir, "recordings", `${r.callSid}.wav`);
    expect(existsSync(path)).toBe(true);
    const soxi = (flag: string) => execFileSync("soxi", [flag, path], { encoding: "utf8" }).trim();
    expect(soxi("-c")).toBe("2");
    expect(soxi("-r")).toBe("8000");
    const seconds = Number(soxi("-D"));
    // Recorded until the agent hung up: most of the call, never more than it.
    expect(seconds).toBeGreaterThan(3);
    expect(seconds * 1000).toBeLessThanOrEqual(r.durationMs + 100);

    const wav = parseWav(new Uint8Array(readFileSync(path)));
    const { left, right } = splitStereo(wav.samples);
    // Sound and silence line up with the simulator's record of the call, window by window.
    const caller = agreement(envelope(left), envelope(r.callerAudio));
    const agent = agreement(envelope(right), envelope(r.agentAudio));
    expect(caller.share).toBeGreaterThan(0.95);
    expect(agent.share).toBeGreaterThan(0.95);
    expect(Math.abs(caller.shift)).toBeLessThanOrEqual(5);
    expect(Math.abs(agent.shift)).toBeLessThanOrEqual(5);
    // Both channels carry their own side: the agent spoke twice (greeting, goodbye), the caller once.
    expect(envelope(left).filter(Boolean).length).toBeGreaterThan(50);
    expect(envelope(right).filter(Boolean).length).toBeGreaterThan(150);
  }, 60_000);
});
