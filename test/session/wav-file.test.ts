// The growing WAV file: playable (header current) after every write, complete after close,
// failures reported once and never thrown, a backlog dropped as silence in its place.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseWav } from "../../codecs/wav.ts";
import { WavFileWriter } from "../../src/session/wav-file.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vb-wav-file-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Interleaved stereo: left counts up from `from`, right is its negation. */
function stereo(frames: number, from = 0): Int16Array {
  const out = new Int16Array(2 * frames);
  for (let i = 0; i < frames; i++) {
    out[2 * i] = (from + i) % 30000;
    out[2 * i + 1] = -((from + i) % 30000);
  }
  return out;
}

const soxi = (flag: string, file: string) => execFileSync("soxi", [flag, file], { encoding: "utf8" }).trim();

describe("WavFileWriter", () => {
  it("keeps the file a complete WAV of what is written, during the call and after close", async () => {
    const path = join(dir, "call.wav");
    const errors: Error[] = [];
    const w = new WavFileWriter(path, { sampleRate: 8000, channels: 2, onError: (e) => errors.push(e) });
    w.append(stereo(8000));
    await w.flushed();
    // Mid-call, as a crash would leave it: sizes in the header match the data on disk.
    const mid = readFileSync(path);
    expect(mid.length).toBe(44 + 32000);
    expect(mid.readUInt32LE(4)).toBe(36 + 32000);
    expect(mid.readUInt32LE(40)).toBe(32000);
    expect(soxi("-s", path)).toBe("8000");
    // Appends while a write is in flight go out together after it.
    w.append(stereo(4000, 8000));
    w.append(stereo(4000, 12000));
    w.append(stereo(2000, 16000));
    await w.close();
    const wav = parseWav(new Uint8Array(readFileSync(path)));
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16, dataBytes: 72000 });
    expect(wav.samples).toEqual(stereo(18000));
    expect(soxi("-c", path)).toBe("2");
    expect(soxi("-r", path)).toBe("8000");
    expect(soxi("-b", path)).toBe("16");
    expect(Number(soxi("-D", path))).toBeCloseTo(2.25, 5);
    expect(errors).toEqual([]);
    expect(w.dataBytes).toBe(72000);
    expect(() => w.append(stereo(1))).toThrow(/closed/);
  });

  it("never writes over a file: the next free name, <name>-2.wav, -3, … takes the audio", async () => {
    const path = join(dir, "call.wav");
    const created: string[] = [];
    const record = async (from: number) => {
      const w = new WavFileWriter(path, {
        sampleRate: 8000,
        channels: 2,
        onError: (e) => expect.fail(e.message),
        onCreated: (p) => created.push(p),
      });
      w.append(stereo(4000, from));
      await w.close();
      return w.path;
    };
    writeFileSync(join(dir, "call-2.wav"), "someone else's file");
    expect(await record(0)).toBe(path);
    expect(await record(1000)).toBe(join(dir, "call-3.wav"));
    expect(await record(2000)).toBe(join(dir, "call-4.wav"));
    expect(created).toEqual([path, join(dir, "call-3.wav"), join(dir, "call-4.wav")]);
    expect(readFileSync(join(dir, "call-2.wav"), "utf8")).toBe("someone else's file");
    for (const [name, from] of [
      ["call.wav", 0],
      ["call-3.wav", 1000],
      ["call-4.wav", 2000],
    ] as const) {
      const wav = parseWav(new Uint8Array(readFileSync(join(dir, name))));
      expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, dataBytes: 16000 });
      expect(wav.samples).toEqual(stereo(4000, from));
    }
  });

  it("gives writers racing for one name a file each, every one intact", async () => {
    const path = join(dir, "race.wav");
    const onError = (e: Error) => expect.fail(e.message);
    // All four ask for the name before any has it (the opens are in flight together).
    const writers = Array.from(
      { length: 4 },
      () => new WavFileWriter(path, { sampleRate: 8000, channels: 2, onError }),
    );
    // Each writes its own audio, in two steps.
    for (const [k, w] of writers.entries()) w.append(stereo(2000, 10000 * k));
    await Promise.all(writers.map((w) => w.flushed()));
    for (const [k, w] of writers.entries()) w.append(stereo(2000, 10000 * k + 2000));
    await Promise.all(writers.map((w) => w.close()));
    const names = ["race.wav", "race-2.wav", "race-3.wav", "race-4.wav"].map((n) => join(dir, n));
    expect(writers.map((w) => w.path).sort()).toEqual(names.sort());
    for (const [k, w] of writers.entries()) {
      const wav = parseWav(new Uint8Array(readFileSync(w.path)));
      expect(wav.dataBytes).toBe(16000);
      expect(wav.samples).toEqual(stereo(4000, 10000 * k));
    }
  });

  it("leaves a valid empty file for a call with no audio", async () => {
    const path = join(dir, "empty.wav");
    await new WavFileWriter(path, { sampleRate: 16000, channels: 2, onError: () => {} }).close();
    const wav = parseWav(new Uint8Array(readFileSync(path)));
    expect(wav).toMatchObject({ sampleRate: 16000, channels: 2, dataBytes: 0 });
    expect(soxi("-s", path)).toBe("0");
  });

  it("reports a file it cannot create once, and neither throws nor writes after", async () => {
    const blocker = join(dir, "not-a-dir");
    writeFileSync(blocker, "x");
    const errors: Error[] = [];
    const w = new WavFileWriter(join(blocker, "call.wav"), {
      sampleRate: 8000,
      channels: 2,
      onError: (e) => errors.push(e),
    });
    w.append(stereo(100));
    await w.flushed();
    expect(w.failed).toBe(true);
    w.append(stereo(100));
    await w.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/ENOTDIR/);
    expect(w.droppedBytes).toBe(400);
  });

  it("reports a full disk once (ENOSPC from /dev/full) and goes on without throwing", async () => {
    const errors: Error[] = [];
    const w = new WavFileWriter("/dev/full", {
      sampleRate: 8000,
      channels: 2,
      onError: (e) => errors.push(e),
      overwrite: true, // the device exists: without this the writer would make /dev/full-2
    });
    w.append(stereo(10));
    await w.flushed();
    w.append(stereo(10));
    await w.close();
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(["ENOSPC"]);
    expect(w.failed).toBe(true);
    expect(w.dataBytes).toBe(0);
  });

  it("drops audio past the backlog limit as silence, keeping later audio in its place", async () => {
    const path = join(dir, "behind.wav");
    const errors: Error[] = [];
    const w = new WavFileWriter(path, {
      sampleRate: 8000,
      channels: 2,
      onError: (e) => errors.push(e),
      maxQueuedBytes: 4000,
    });
    // All three are queued before the first write can start: the second does not fit.
    w.append(stereo(1000, 0)); // 4000 bytes
    w.append(stereo(1000, 1000)); // dropped
    await w.flushed();
    w.append(stereo(1000, 2000));
    await w.close();
    const wav = parseWav(new Uint8Array(readFileSync(path)));
    expect(wav.dataBytes).toBe(12000);
    expect(wav.samples.subarray(0, 2000)).toEqual(stereo(1000, 0));
    expect([...new Set(wav.samples.subarray(2000, 4000))]).toEqual([0]);
    expect(wav.samples.subarray(4000)).toEqual(stereo(1000, 2000));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/fell .* behind/);
    expect(w.droppedBytes).toBe(4000);
  });
});
