// The hold loop of a warm transfer: the default tone, and the operator's WAV read, mixed down and
// resampled to the call's rate (with errors naming the setting and the file).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../codecs/wav.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import { HoldAudio, holdAudioFile, holdTone } from "../../src/session/hold-audio.ts";
import { VirtualTransport } from "./harness.ts";

const dir = mkdtempSync(join(tmpdir(), "hold-audio-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("hold audio", () => {
  it("the default tone: 0.4 s of sound in every 2 s", () => {
    const loop = holdTone(8000);
    expect(loop.length).toBe(16_000);
    expect(loop.subarray(0, 3200).some((v) => Math.abs(v) > 3000)).toBe(true);
    expect(loop.subarray(3200).every((v) => v === 0)).toBe(true);
  });

  it("reads a stereo 16 kHz WAV as mono at the call's rate", async () => {
    const frames = 16_000;
    const stereo = new Int16Array(frames * 2);
    for (let i = 0; i < frames; i++) {
      stereo[2 * i] = 4000;
      stereo[2 * i + 1] = 2000;
    }
    const file = join(dir, "music.wav");
    writeFileSync(file, encodeWav(stereo, 16_000, 2));
    const loop = await holdAudioFile(file, 8000);
    expect(Math.abs(loop.length - 8000)).toBeLessThan(40);
    expect(Math.abs(loop[4000]! - 3000)).toBeLessThan(60);
    await expect(holdAudioFile(join(dir, "missing.wav"), 8000)).rejects.toThrow(/missing\.wav/);
  });

  it("keeps the line fed while it plays, and drops what is queued when it stops", async () => {
    const clock = new VirtualClock();
    const transport = new VirtualTransport(clock);
    const hold = new HoldAudio(transport, clock, holdTone(8000), 8000);
    hold.start();
    for (let t = 0; t < 5000; t += 20) {
      clock.advance(20);
      expect(transport.agentSpeaking).toBe(true);
    }
    hold.stop();
    expect(transport.agentSpeaking).toBe(false);
    const pieces = transport.played.length;
    clock.advance(1000);
    expect(transport.played.length).toBe(pieces);
  });
});
