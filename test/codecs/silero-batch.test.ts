// Windows of many calls pending at once run as one batched inference; every call must still get
// exactly what it gets alone (rows of the batch are independent, each stream keeps its own state).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadSileroModel } from "../../codecs/silero.ts";
import { buildScene } from "../helpers/speech.ts";

describe("Silero batching across streams", () => {
  it("gives each stream the probabilities it gets alone, at 16 and 8 kHz mixed", async () => {
    const model = await loadSileroModel();
    // Every window through the worker's batches (a few streams would otherwise run inline).
    model.inlineStreams = 0;
    const scenes = ["Please transfer me to an agent", "What are your opening hours", "Goodbye"].map(
      (say, i) => buildScene([{ say }], { noise: { color: "white", dbfs: -50, seed: i + 1 } }).pcm,
    );
    const windowsOf = (pcm: Int16Array, n: number) =>
      Array.from({ length: Math.floor(pcm.length / n) }, (_, i) => pcm.subarray(i * n, (i + 1) * n));
    const jobs = [
      { pcm: scenes[0]!, rate: 16000 as const },
      { pcm: scenes[1]!, rate: 16000 as const },
      { pcm: scenes[2]!, rate: 8000 as const },
      { pcm: scenes[0]!, rate: 8000 as const },
    ];
    const alone: number[][] = [];
    for (const job of jobs) {
      const s = model.createStream(job.rate);
      const out: number[] = [];
      for (const w of windowsOf(job.pcm, s.windowSamples)) out.push(await s.probability(w));
      alone.push(out);
    }
    // Together: every stream has one window pending at a time, all streams at once.
    const together = await Promise.all(
      jobs.map(async (job) => {
        const s = model.createStream(job.rate);
        const out: number[] = [];
        for (const w of windowsOf(job.pcm, s.windowSamples)) out.push(await s.probability(w));
        return out;
      }),
    );
    for (let j = 0; j < jobs.length; j++) {
      expect(together[j]!.length).toBe(alone[j]!.length);
      const diff = Math.max(...together[j]!.map((p, i) => Math.abs(p - alone[j]![i]!)));
      expect(diff).toBeLessThan(1e-5);
    }
    expect(Math.max(...alone[0]!)).toBeGreaterThan(0.9);
  });

  it("neither its worker thread nor its inline session keeps a process alive: a script exits once its work is done", () => {
    const silero = fileURLToPath(new URL("../../codecs/silero.ts", import.meta.url));
    const script = `
      import { loadSileroModel } from ${JSON.stringify(silero)};
      const model = await loadSileroModel();
      // Only silence below any energy gate: the worker is loaded but never asked for anything.
      model.createStream(16000).skip(new Int16Array(512));
      // One window run inline (a lone stream): the main thread's session holds nothing open either.
      await model.createStream(16000).probability(new Int16Array(512).fill(1000));
      console.log("done");
    `;
    const dir = mkdtempSync(join(tmpdir(), "silero-exit-"));
    const file = join(dir, "run.mjs");
    writeFileSync(file, script);
    const r = spawnSync(process.execPath, [file], { encoding: "utf8", timeout: 10_000 });
    rmSync(dir, { recursive: true, force: true });
    expect(r.stdout.trim()).toBe("done");
    expect(r.status).toBe(0);
  });
});
