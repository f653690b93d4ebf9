// The soak benchmark's parts that keep nothing per frame: the frame timer fed one frame at a time
// agrees with the whole-array analysis, the lateness histogram's percentiles and merge, window
// lookup, and GC pauses read from a --trace-gc log a stretch at a time.
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AgentFrameTimer, analyzeAgentFrames } from "../../bench/lib/calls-frames.ts";
import { GcTrace } from "../../bench/lib/soak-gc.ts";
import { LatenessHistogram, windowOf } from "../../bench/lib/soak-window.ts";

describe("AgentFrameTimer", () => {
  it("gives analyzeAgentFrames' lateness and gaps, frame by frame, clears and caller speech included", () => {
    // Two replies with a stall inside the first, a clear in the second, a reply after caller speech.
    const arrivals: number[] = [];
    for (let i = 0; i < 60; i++) arrivals.push(1000 + (i < 10 ? 0 : (i - 9) * 20) + (i === 30 ? 260 : 0));
    for (let i = 0; i < 40; i++) arrivals.push(3000 + (i < 10 ? 0 : (i - 9) * 20) + (i > 20 ? 300 : 0));
    for (let i = 0; i < 20; i++) arrivals.push(6000 + i * 20);
    arrivals.sort((a, b) => a - b);
    const clearsMs = [3300];
    const callerSpeechStartsMs = [5500];
    const whole = analyzeAgentFrames(arrivals, { clearsMs, callerSpeechStartsMs });
    const timer = new AgentFrameTimer({ callerSpeechStartsMs });
    const late: number[] = [];
    let c = 0;
    for (const t of arrivals) {
      while (c < clearsMs.length && clearsMs[c]! <= t) timer.clear(clearsMs[c++]!);
      late.push(timer.frame(t));
    }
    expect(late).toEqual(whole.latenessMs);
    expect(timer.gapFrames).toBe(whole.gapFrames);
    expect(timer.gaps).toBe(whole.gaps);
    expect(timer.stretches).toBe(whole.stretches);
    expect(whole.gapFrames).toBeGreaterThan(0);
  });
});

describe("LatenessHistogram", () => {
  it("percentiles to 0.1 ms, merged across load generators exactly", () => {
    const a = new LatenessHistogram();
    const b = new LatenessHistogram();
    for (let i = 0; i < 990; i++) a.add(1.04);
    for (let i = 0; i < 10; i++) b.add(250);
    const all = new LatenessHistogram();
    all.merge(a.toSparse(), a.max);
    all.merge(b.toSparse(), b.max);
    expect(all.total).toBe(1000);
    expect(all.percentile(99)).toBeCloseTo(1.1, 9);
    expect(all.percentile(99.5)).toBeCloseTo(250.1, 9);
    expect(all.max).toBe(250);
    expect(new LatenessHistogram().percentile(99)).toBeNaN();
    const late = new LatenessHistogram();
    late.add(5000);
    expect(late.percentile(50)).toBeCloseTo(2000.1, 6);
  });

  it("windowOf places epoch times in [start, end) windows", () => {
    const w: [number, number][] = [
      [100, 200],
      [200, 300],
    ];
    expect([windowOf(w, 99), windowOf(w, 100), windowOf(w, 199), windowOf(w, 200), windowOf(w, 300)]).toEqual(
      [-1, 0, 0, 1, 2],
    );
  });
});

describe("GcTrace", () => {
  const dir = mkdtempSync(join(tmpdir(), "soak-gc-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the pauses logged since the last read, the first isolate logged as the main thread", () => {
    const log = join(dir, "bridge.log");
    const main = "[7346:0x37dce000]";
    const worker = "[7346:0x7f6e50001000]";
    appendFileSync(
      log,
      `${main}    91171 ms: Scavenge 105.3 (154.8) -> 81.3 (154.8) MB, pooled: 4 MB, 14.97 / 0.03 ms  (average mu = 0.927, current mu = 0.929) task;\n` +
        `{"level":30,"msg":"agent said"}\n` +
        `${worker}      139 ms: Mark-Compact 10.1 (13.8) -> 9.2 (14.3) MB, pooled: 0 MB, 31.58 / 0.00 ms  (+ 0.2 ms in 8 steps since start of marking, biggest step 0.1 ms, walltime since start of marking 7 ms) (average mu = 0.987, current mu = 0.987) finalize incremental marking via task; GC in old space requested\n` +
        `${main}    91771 ms: Mark-Compact 108.7 (154.8) -> 81.7 (156.1) MB, pooled: 3 MB, 72.83 / 0.04 ms  (+ 82.2 ms in 552 steps since start of marking) finalize incremental marking via stack guard; GC in old space requested\n` +
        `${main}    92000 ms: Scav`,
    );
    const gc = new GcTrace(log);
    expect(gc.read()).toEqual({
      mainMax: 72.83,
      mainTotal: 72.83 + 14.97,
      workersMax: 31.58,
      major: 1,
      minor: 1,
    });
    appendFileSync(log, `enge 105.3 (154.8) -> 81.3 (154.8) MB, pooled: 4 MB, 5.5 / 0.03 ms  task;\n`);
    expect(gc.read()).toEqual({ mainMax: 5.5, mainTotal: 5.5, workersMax: 0, major: 0, minor: 1 });
    // A worker that collects more often than the main thread (the VAD's, when SIP's media runs on a
    // native thread) is still a worker.
    const workerScavenge = (ms: number) =>
      `${worker}   ${ms} ms: Scavenge 3.3 (4.8) -> 1.3 (4.8) MB, pooled: 0 MB, 2.5 / 0.03 ms  task;\n`;
    appendFileSync(log, [1, 2, 3, 4, 5].map((i) => workerScavenge(92000 + i)).join(""));
    expect(gc.read()).toEqual({ mainMax: 0, mainTotal: 0, workersMax: 2.5, major: 0, minor: 0 });
    appendFileSync(
      log,
      `${main}   616791 ms: Mark-Compact (reduce) 111.7 (185.8) -> 77.0 (87.6) MB, pooled: 0 MB, 58.67 / 0.00 ms  (+ 43.0 ms in 362 steps since start of marking, biggest step 4.9 ms, walltime since start of marking 106 ms) (average mu = 0.990, current mu = 0.987) finalize incremental marking via task; GC in old space requested\n`,
    );
    expect(gc.read()).toEqual({ mainMax: 58.67, mainTotal: 58.67, workersMax: 0, major: 1, minor: 0 });
    // --trace-gc-nvp's lines: pause= and gc= (s: scavenge, mc: mark-compact).
    appendFileSync(
      log,
      "[7346:0x37dce000:0]   620000 ms: pause=35.5 mutator=3000.1 gc=mc reduce_memory=0 evacuate=18.5\n" +
        "[7346:0x37dce000:0]   620100 ms: pause=4.4 mutator=99.0 gc=s reduce_memory=0 scavenge=4.3\n" +
        "[7346:0x7f6e50001000:0]   620200 ms: pause=1.2 mutator=99.0 gc=s reduce_memory=0\n",
    );
    expect(gc.read()).toEqual({ mainMax: 35.5, mainTotal: 39.9, workersMax: 1.2, major: 1, minor: 1 });
    expect(gc.read()).toEqual({ mainMax: 0, mainTotal: 0, workersMax: 0, major: 0, minor: 0 });
  });
});
