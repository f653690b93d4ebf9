// VoiceActivityDetector.write(): the per-frame entry point the session uses (no promise or result
// per frame). Checked against the pipeline written out plainly (one window after another, each
// inference awaited) on real speech under noise, and for what it promises: windows below the gate
// decided inside write(), a reset dropping the inference in flight, callback errors contained.
import { beforeAll, describe, expect, it } from "vitest";
import { LoudnessCue } from "../../codecs/loudness-cue.ts";
import { levelDbfs } from "../../codecs/pcm.ts";
import type { SileroModel } from "../../codecs/silero.ts";
import { SpeechSegmenter } from "../../codecs/speech-segmenter.ts";
import { loadSileroModel, type VadEvent, VoiceActivityDetector } from "../../codecs/vad.ts";
import { buildScene, type Scene } from "../helpers/speech.ts";

/** The detector's pipeline, sequentially: energy gate, level cue, Silero on ungated windows, segmenter. */
async function reference(model: SileroModel, pcm: Int16Array): Promise<VadEvent[]> {
  const stream = model.createStream(16000);
  const segmenter = new SpeechSegmenter();
  const cue = new LoudnessCue({ windowMs: 32 });
  const events: VadEvent[] = [];
  let gatedRun = 0;
  for (let o = 0, k = 0; o + 512 <= pcm.length; o += 512, k++) {
    const w = pcm.slice(o, o + 512);
    const gated = levelDbfs(w) < -55;
    const power = cue.measure(w);
    const loud = !gated && cue.isLoud(power);
    let p = 0;
    if (gated) {
      if (++gatedRun === 16) stream.reset(); // about 0.5 s below the gate: start-of-stream state
      stream.skip(w);
    } else {
      gatedRun = 0;
      p = await stream.probability(w);
    }
    if (!segmenter.speaking && p < segmenter.negThreshold) cue.learnNoise(power);
    const e = segmenter.update(p, k * 32, (k + 1) * 32, loud);
    if (e) events.push(e);
  }
  return events;
}

/** Writes in 20 ms frames without waiting; resolves once every complete window is decided. */
async function writeAll(vad: VoiceActivityDetector, pcm: Int16Array): Promise<void> {
  for (let o = 0; o < pcm.length; o += 320) vad.write(pcm.subarray(o, o + 320));
  await vad.push(new Int16Array(0)); // resolves when the windows before it are decided
}

let model: SileroModel;
let scene: Scene;
let expected: VadEvent[];

beforeAll(async () => {
  model = await loadSileroModel();
  scene = buildScene(
    [
      { silenceMs: 500 },
      { say: "Book a table for two" },
      { silenceMs: 800 },
      { say: "Yes please" },
      { silenceMs: 700 },
    ],
    { noise: { color: "pink", dbfs: -50, seed: 4 } },
  );
  expected = await reference(model, scene.pcm);
}, 60_000);

describe("VoiceActivityDetector.write", () => {
  it("decides what the plain sequential pipeline decides, on speech under noise", async () => {
    expect(expected.map((e) => e.type)).toEqual(["speech-start", "speech-end", "speech-start", "speech-end"]);
    const seen: VadEvent[] = [];
    const vad = new VoiceActivityDetector(model, { onEvent: (e) => seen.push(e) });
    await writeAll(vad, scene.pcm);
    expect(seen).toEqual(expected);
    expect(vad.positionMs).toBe(Math.floor(scene.pcm.length / 512) * 32);
    expect(vad.speaking).toBe(false);
  });

  it("decides windows below the gate inside write(): speech-end comes from the write that completes it", async () => {
    const endOfSpeech = Math.round((scene.speech[0]!.endMs * 16000) / 1000);
    const seen: VadEvent[] = [];
    const vad = new VoiceActivityDetector(model, { onEvent: (e) => seen.push(e) });
    await writeAll(vad, scene.pcm.subarray(0, endOfSpeech));
    expect(seen.map((e) => e.type)).toEqual(["speech-start"]);
    // Digital silence after the words. The window holding their last samples still goes to the
    // model; after it every window is gated, so nothing waits for the model any more.
    const silence = new Int16Array(320);
    let samples = endOfSpeech;
    const lastSpeechWindowEnd = Math.ceil(endOfSpeech / 512) * 512;
    for (; samples < lastSpeechWindowEnd; samples += 320) vad.write(silence);
    await vad.push(new Int16Array(0));
    let writes = 0;
    while (seen.length === 1 && writes < 50) {
      vad.write(silence);
      samples += 320;
      writes++;
      expect(vad.positionMs).toBe(Math.floor(samples / 512) * 32); // decided by now, not later
    }
    expect(seen.map((e) => e.type)).toEqual(["speech-start", "speech-end"]);
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThan(50);
  });

  it("drops the inference in flight at reset() and starts the stream afresh", async () => {
    const seen: VadEvent[] = [];
    const vad = new VoiceActivityDetector(model, { onEvent: (e) => seen.push(e) });
    const speechAt = Math.round((scene.speech[0]!.startMs * 16000) / 1000);
    for (let o = 0; o < speechAt + 16000; o += 320) vad.write(scene.pcm.subarray(o, o + 320));
    vad.reset(); // windows of the speech are with the model or waiting behind it
    expect(vad.positionMs).toBe(0);
    seen.length = 0;
    await writeAll(vad, scene.pcm);
    expect(seen).toEqual(expected);
  });

  it("hands what onEvent throws to onError and goes on", async () => {
    const seen: VadEvent[] = [];
    const errors: string[] = [];
    const vad = new VoiceActivityDetector(model, {
      onEvent: (e) => {
        seen.push(e);
        if (e.type === "speech-start") throw new Error(`listener failed at ${e.atMs}`);
      },
      onError: (err) => errors.push(err.message),
    });
    await writeAll(vad, scene.pcm);
    expect(seen).toEqual(expected);
    expect(errors).toEqual(
      expected.filter((e) => e.type === "speech-start").map((e) => `listener failed at ${e.atMs}`),
    );
  });

  it("with maxBacklogMs, holds no more audio than that while the model is behind: the oldest is skipped, counted, the timeline kept", async () => {
    const skips: number[] = [];
    const seen: VadEvent[] = [];
    const vad = new VoiceActivityDetector(model, {
      maxBacklogMs: 1000,
      onSkip: (ms) => skips.push(ms),
      onEvent: (e) => seen.push(e),
    });
    // The whole scene at once: the model cannot answer before the event loop turns, so all of it
    // queues behind the first window sent to the model, as a starved machine's would.
    const loud = buildScene([
      { say: "Book a table for two please, tomorrow at eight" },
      { silenceMs: 200 },
    ]).pcm;
    for (let o = 0; o < loud.length; o += 320) vad.write(loud.subarray(o, o + 320));
    const windows = Math.floor(loud.length / 512);
    const skipped = skips.reduce((a, b) => a + b, 0);
    expect(vad.skippedMs).toBe(skipped);
    // All but about the bound (and the window in flight) was skipped, in whole windows.
    expect(skipped).toBeGreaterThanOrEqual(windows * 32 - 1000 - 2 * 32);
    expect(skipped % 32).toBe(0);
    await vad.push(new Int16Array(0));
    // Every window of the audio is accounted for: positions follow the audio, skipped or not.
    expect(vad.positionMs).toBe(windows * 32);
    // And the detector goes on: the scene written at the model's pace is decided as usual.
    vad.reset();
    seen.length = 0;
    for (let o = 0; o < scene.pcm.length; o += 320) await vad.push(scene.pcm.subarray(o, o + 320));
    expect(vad.skippedMs).toBe(skipped);
    expect(seen).toEqual(expected);
  });
});
