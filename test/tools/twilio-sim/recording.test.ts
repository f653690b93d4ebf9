// A recorded call through the real Twilio routes, driven by the call simulator over a real
// socket, with a scripted agent that is interrupted: the recording's two channels must match
// what the simulated caller sent and what it heard (barge-in cut included), on one timeline.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mulawDecode, mulawEncode } from "../../../codecs/g711.ts";
import { levelDbfs } from "../../../codecs/pcm.ts";
import { parseWav } from "../../../codecs/wav.ts";
import { systemClock } from "../../../src/core/clock.ts";
import { RecordingTransport } from "../../../src/session/call-recording.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { find, type Rig, scriptedAgent, startRig, tone } from "../../bridges/twilio/helpers.ts";
import { splitStereo } from "../../helpers/stereo.ts";

let rig: Rig | undefined;
let dir: string | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Stretches of sound, [startMs, endMs], found in 10 ms windows. */
function sounds(pcm: Int16Array, rate = 8000): Array<[number, number]> {
  const win = rate / 100;
  const out: Array<[number, number]> = [];
  let start = -1;
  for (let i = 0; i * win < pcm.length; i++) {
    const loud = levelDbfs(pcm.subarray(i * win, (i + 1) * win)) > -40;
    if (loud && start < 0) start = i;
    if (!loud && start >= 0) {
      out.push([start * 10, i * 10]);
      start = -1;
    }
  }
  if (start >= 0) out.push([start * 10, Math.ceil(pcm.length / win) * 10]);
  return out;
}

const soxi = (flag: string, file: string) => execFileSync("soxi", [flag, file], { encoding: "utf8" }).trim();
/** Positions on the two timelines (the simulator's and the bridge's) agree to within this. */
const SLACK_MS = 80;

describe("call recording through the Twilio bridge", () => {
  it("records the caller left and what the caller heard right, the interrupted greeting cut", async () => {
    dir = mkdtempSync(join(tmpdir(), "vb-twilio-rec-"));
    const path = join(dir, "call.wav");
    const greeting = tone(3000, 440);
    const reply = tone(400, 660);
    const errors: Error[] = [];
    let recording: RecordingTransport | undefined;
    rig = await startRig({
      attach: false,
      onCall(call) {
        recording = new RecordingTransport(call.transport, {
          path,
          clock: systemClock,
          onError: (e) => errors.push(e),
        });
        scriptedAgent(recording, { greeting, reply });
      },
    });
    // The caller talks over the greeting from 500 to 1100 ms.
    const caller = new Int16Array(8000 * 1.1);
    caller.set(tone(600, 300), 8000 * 0.5);
    const result = await simulateCall({
      url: rig.base,
      caller: { samples: caller, rate: 8000 },
      hangUpAfterMs: 400,
      maxSeconds: 20,
      fetchTranscript: false,
    });
    expect(result.clears).toHaveLength(1);
    // The stream's stop ended the call; the recording completed itself.
    await recording!.close();
    expect(errors).toEqual([]);

    expect(soxi("-c", path)).toBe("2");
    expect(soxi("-r", path)).toBe("8000");
    expect(soxi("-b", path)).toBe("16");
    expect(Math.abs(Number(soxi("-D", path)) * 1000 - result.durationMs)).toBeLessThan(SLACK_MS);
    const wav = parseWav(new Uint8Array(readFileSync(path)));
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16 });
    const { left, right } = splitStereo(wav.samples);

    // Left: the caller's audio exactly as the bridge decoded it, where the caller said it.
    expect(find(left, mulawDecode(mulawEncode(caller.subarray(4400, 8000))))).toBeGreaterThan(0);
    const callerSounds = sounds(left);
    expect(callerSounds).toHaveLength(1);
    expect(Math.abs(callerSounds[0]![0] - 500)).toBeLessThan(SLACK_MS);
    expect(Math.abs(callerSounds[0]![1] - 1100)).toBeLessThan(SLACK_MS);

    // Right: the greeting as played, then the reply; just what the simulated caller heard.
    expect(find(right, greeting.subarray(0, 4000))).toBeLessThan((SLACK_MS * 8000) / 1000);
    const heard = sounds(result.agentAudio);
    const recorded = sounds(right);
    expect(heard).toHaveLength(2);
    expect(recorded).toHaveLength(2);
    for (let i = 0; i < 2; i++) {
      expect(Math.abs(recorded[i]![0] - heard[i]![0])).toBeLessThan(SLACK_MS);
      expect(Math.abs(recorded[i]![1] - heard[i]![1])).toBeLessThan(SLACK_MS);
    }
    // The greeting stops at the barge-in, not after its 3 s; the reply follows the caller.
    expect(recorded[0]![1]).toBeLessThan(1500);
    expect(recorded[1]![0]).toBeGreaterThan(1100);
    expect(recorded[1]![1] - recorded[1]![0]).toBeCloseTo(400, -2);
  });
});
