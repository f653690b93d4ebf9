// A recorded room under the noisy set (`--noise ./room.wav:16`, bench/lib/turns-recording.ts),
// decoded by the real ffmpeg: parsed beside the synthesized rooms, taken as the line carries it
// (8 kHz mono from a 16 kHz stereo file), levelled like them, seeded, looped without a click, and
// refused with the file's name when it cannot be a room.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { activeLevelDb, background, parseNoise } from "../../bench/lib/turns-backgrounds.ts";
import { loadRecording, recordedRoom } from "../../bench/lib/turns-recording.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { seededRandom } from "../helpers/noise.ts";

const dir = mkdtempSync(join(tmpdir(), "vb-turns-recording-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `seconds` of a `hz` sine at amplitude `amp` (of full scale), 16 kHz, the same on both channels. */
function sineWav(name: string, seconds: number, hz: number, amp: number): string {
  const n = Math.round(seconds * 16000);
  const pcm = new Int16Array(n * 2);
  for (let i = 0; i < n; i++)
    pcm[2 * i] = pcm[2 * i + 1] = Math.round(amp * 32767 * Math.sin((2 * Math.PI * hz * i) / 16000));
  const path = join(dir, name);
  writeFileSync(path, encodeWav(pcm, 16000, 2));
  return path;
}

/** The largest step from one sample to the next. */
function maxStep(x: Float64Array): number {
  let most = 0;
  for (let i = 1; i < x.length; i++) most = Math.max(most, Math.abs(x[i]! - x[i - 1]!));
  return most;
}

describe("a recorded room under the noisy set", () => {
  // 2.5 s of 436.9 Hz ends a quarter cycle short of whole: played again from its start without a
  // crossfade, it would step from its peak to zero.
  const tone = sineWav("tone.wav", 2.5, 436.9, 0.5);

  it("is parsed beside the synthesized rooms", async () => {
    expect(await parseNoise(`${tone}:16,hiss:24`)).toEqual([
      { kind: "recording", path: tone, belowDb: 16 },
      { kind: "hiss", belowDb: 24 },
    ]);
  });

  it("plays at 8 kHz, levelled as the synthesized rooms are, the same for the same seed", async () => {
    const [layer] = await parseNoise(`${tone}:10`);
    const a = background(layer!, 7000, 3);
    expect(a.length).toBe(56_000);
    expect(activeLevelDb(a, 1)).toBeCloseTo(0, 1);
    expect(background(layer!, 7000, 3)).toEqual(a);
    expect(background(layer!, 7000, 4)).not.toEqual(a);
  });

  it("loops under a call longer than itself without a click where it starts again", async () => {
    await loadRecording(tone);
    const room = recordedRoom(tone, 8000 * 8, seededRandom(1));
    // The sine moves at most 2π·437/8000 of its amplitude (0.5) per sample: 0.17.
    expect(maxStep(room)).toBeLessThan(0.2);
    expect(Math.max(...room.map(Math.abs))).toBeGreaterThan(0.45);
  });

  it("refuses a file that cannot be a room, naming it", async () => {
    await expect(parseNoise(join(dir, "nowhere.wav:16"))).rejects.toThrow(/no recording at .*nowhere\.wav/);
    const short = sineWav("short.wav", 1, 300, 0.5);
    await expect(parseNoise(`${short}:16`)).rejects.toThrow(
      /short\.wav holds 1\.0 s of audio; a room needs at least 2 s/,
    );
    const text = join(dir, "notes.txt");
    writeFileSync(text, "not a sound\n".repeat(100));
    await expect(parseNoise(`${text}:16`)).rejects.toThrow(/ffmpeg could not read .*notes\.txt as audio/);
    await expect(parseNoise("rain:16")).rejects.toThrow(
      /KIND one of talker, .* or a recording's path .*got "rain:16"/,
    );
  });
});
