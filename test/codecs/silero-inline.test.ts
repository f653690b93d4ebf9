// A few streams run their windows inline, on the calling thread; past `inlineStreams` live streams
// the windows go to the worker in batches. Either way a stream gets the same probabilities.
import { describe, expect, it } from "vitest";
import { INLINE_STREAMS, loadSileroModel, type SileroModel } from "../../codecs/silero.ts";
import { buildScene } from "../helpers/speech.ts";

const scenes = ["What are your opening hours", "Please transfer me to an agent"].map(
  (say, i) => buildScene([{ say }], { noise: { color: "white", dbfs: -50, seed: i + 11 } }).pcm,
);

function windowsOf(pcm: Int16Array, n: number): Int16Array[] {
  return Array.from({ length: Math.floor(pcm.length / n) }, (_, i) => pcm.subarray(i * n, (i + 1) * n));
}

async function probabilities(model: SileroModel, pcm: Int16Array, rate: 16000 | 8000): Promise<number[]> {
  const s = model.createStream(rate);
  const out: number[] = [];
  for (const w of windowsOf(pcm, s.windowSamples)) out.push(await s.probability(w));
  return out;
}

function maxDiff(a: number[], b: number[]): number {
  expect(a.length).toBe(b.length);
  return Math.max(...a.map((p, i) => Math.abs(p - b[i]!)));
}

describe("Silero inline inference for few streams", () => {
  it("gives what the batched worker gives, at 16 and 8 kHz", async () => {
    const model = await loadSileroModel();
    for (const rate of [16000, 8000] as const) {
      model.inlineStreams = 0;
      const before = model.runs;
      const batched = await probabilities(model, scenes[0]!, rate);
      expect(model.runs.inline).toBe(before.inline);
      expect(model.runs.batched - before.batched).toBe(batched.length);

      model.inlineStreams = INLINE_STREAMS;
      const mid = model.runs;
      const inline = await probabilities(model, scenes[0]!, rate);
      expect(model.runs.batched).toBe(mid.batched);
      expect(model.runs.inline - mid.inline).toBe(inline.length);

      expect(maxDiff(inline, batched)).toBeLessThan(1e-5);
      expect(Math.max(...inline)).toBeGreaterThan(0.9);
    }
  });

  it("batches once more than inlineStreams streams are live, and a lone stream runs inline again", async () => {
    const model = await loadSileroModel();
    model.inlineStreams = 0;
    const alone = await Promise.all(scenes.map((pcm) => probabilities(model, pcm, 16000)));

    model.inlineStreams = 2;
    const before = model.runs;
    // Six streams at once, every one with a window pending at a time.
    const jobs = [0, 1, 0, 1, 0, 1];
    const together = await Promise.all(jobs.map((j) => probabilities(model, scenes[j]!, 16000)));
    const during = model.runs;
    expect(during.batched - before.batched).toBeGreaterThan(0);
    jobs.forEach((j, i) => {
      expect(maxDiff(together[i]!, alone[j]!)).toBeLessThan(1e-5);
    });

    // Once the others have gone quiet (no request for longer than a stream stays live), one stream
    // is alone: its windows run inline. (Going stale is time passing, LIVE_MS of performance.now()
    // with no request: this wait and the ones below are the condition itself, not a stand-in.)
    await new Promise((r) => setTimeout(r, 150));
    const lone = await probabilities(model, scenes[1]!, 16000);
    expect(model.runs.batched).toBe(during.batched);
    expect(model.runs.inline - during.inline).toBe(lone.length);
    expect(maxDiff(lone, alone[1]!)).toBeLessThan(1e-5);
  });

  it("runs the windows asked for in one turn of the loop as one batch, each row as it would run alone", async () => {
    const model = await loadSileroModel();
    model.inlineStreams = 0;
    const alone = await Promise.all(scenes.map((pcm) => probabilities(model, pcm, 16000)));
    model.inlineStreams = INLINE_STREAMS;
    await new Promise((r) => setTimeout(r, 100)); // the streams above go stale
    // Six speakers whose windows all complete on the same tick (a Discord channel's, say).
    const jobs = [0, 1, 0, 1, 0, 1];
    const streams = jobs.map(() => model.createStream(16000));
    const windows = scenes.map((pcm) => windowsOf(pcm, streams[0]!.windowSamples));
    const rounds = Math.min(...windows.map((w) => w.length));
    const got: number[][] = jobs.map(() => []);
    const before = model.runs;
    for (let w = 0; w < rounds; w++) {
      await new Promise<void>((resolve, reject) => {
        let left = streams.length;
        streams.forEach((s, i) => {
          s.requestProbability(windows[jobs[i]!]![w]!, (_s, p, err) => {
            if (err) reject(err);
            got[i]!.push(p);
            if (--left === 0) resolve();
          });
        });
      });
    }
    const after = model.runs;
    expect(after.batched).toBe(before.batched);
    expect(after.inline - before.inline).toBe(rounds * streams.length);
    expect(after.inlineBatches - before.inlineBatches).toBe(rounds);
    jobs.forEach((j, i) => {
      expect(maxDiff(got[i]!, alone[j]!.slice(0, rounds))).toBeLessThan(1e-5);
    });
  });

  it("counts a speaker who pauses and goes on as one stream, however many pauses", async () => {
    const model = await loadSileroModel();
    model.inlineStreams = 1;
    // The model is the process's: streams of the tests before go stale first.
    await new Promise((r) => setTimeout(r, 100));
    const s = model.createStream(16000);
    const windows = windowsOf(scenes[0]!, s.windowSamples).slice(0, 6);
    const before = model.runs;
    for (let phrase = 0; phrase < 3; phrase++) {
      for (const w of windows) await s.probability(w);
      // Longer than a stream stays live: it goes stale, then asks again as the same stream.
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(model.runs.batched).toBe(before.batched);
    expect(model.runs.inline - before.inline).toBe(3 * windows.length);
    model.inlineStreams = INLINE_STREAMS;
  });
});
