// SileroStream.requestProbability(): the callback form the VAD uses per window (no promise per
// window), against probability() on the same speech.
import { describe, expect, it } from "vitest";
import { loadSileroModel, type SileroStream } from "../../codecs/silero.ts";
import { buildScene } from "../helpers/speech.ts";

describe("SileroStream.requestProbability", () => {
  it("gives what probability() gives, window after window, with one callback for the stream", async () => {
    const model = await loadSileroModel();
    const pcm = buildScene([{ say: "What are your opening hours" }], {
      noise: { color: "white", dbfs: -50, seed: 3 },
    }).pcm;
    const windows = Array.from({ length: Math.floor(pcm.length / 512) }, (_, i) =>
      pcm.subarray(i * 512, (i + 1) * 512),
    );
    const viaPromise: number[] = [];
    const a = model.createStream(16000);
    for (const w of windows) viaPromise.push(await a.probability(w));

    const viaCallback = await new Promise<number[]>((resolve, reject) => {
      const out: number[] = [];
      const b = model.createStream(16000);
      const next = (s: SileroStream, p: number, err?: Error) => {
        if (err) return reject(err);
        expect(s).toBe(b);
        out.push(p);
        if (out.length === windows.length) resolve(out);
        else s.requestProbability(windows[out.length]!, next); // from inside the callback
      };
      b.requestProbability(windows[0]!, next);
    });
    expect(viaCallback.length).toBe(viaPromise.length);
    expect(Math.max(...viaCallback.map((p, i) => Math.abs(p - viaPromise[i]!)))).toBeLessThan(1e-5);
    expect(Math.max(...viaCallback)).toBeGreaterThan(0.9);
    expect(() => a.requestProbability(new Int16Array(100), () => {})).toThrow(RangeError);
  });
});
