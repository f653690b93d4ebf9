import { describe, expect, it } from "vitest";
import {
  applyGain,
  dbToGain,
  Framer,
  float32ToInt16,
  frameSamples,
  int16ToFloat32,
  levelDbfs,
  stereoToMono,
} from "../../codecs/pcm.ts";

function sine(n: number, amplitude: number, cyclesPerSample: number, phase = 0): Int16Array {
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++)
    out[i] = Math.round(amplitude * Math.sin(2 * Math.PI * cyclesPerSample * i + phase));
  return out;
}

describe("int16 ⇄ float32", () => {
  it("maps the extremes and zero exactly", () => {
    expect([...int16ToFloat32(new Int16Array([-32768, 0, 16384, 32767]))]).toEqual([
      -1,
      0,
      0.5,
      32767 / 32768,
    ]);
  });

  it("round-trips every Int16 value", () => {
    const all = new Int16Array(65536).map((_, i) => i - 32768);
    expect(float32ToInt16(int16ToFloat32(all))).toEqual(all);
  });

  it("rounds to nearest and clamps out-of-range floats and NaN", () => {
    const f = new Float32Array([1.5, -1.5, 1, 0.4 / 32768, 0.6 / 32768, -0.6 / 32768, Number.NaN]);
    expect([...float32ToInt16(f)]).toEqual([32767, -32768, 32767, 0, 1, -1, 0]);
  });

  it("writes into a caller buffer, returning a view of the input's length", () => {
    const buf = new Float32Array(8);
    const v = int16ToFloat32(new Int16Array([16384, -16384]), buf);
    expect(v.buffer).toBe(buf.buffer);
    expect([...v]).toEqual([0.5, -0.5]);
    expect(() => float32ToInt16(new Float32Array(3), new Int16Array(2))).toThrow(RangeError);
  });
});

describe("stereoToMono", () => {
  it("averages each L/R pair", () => {
    const st = new Int16Array([100, 300, -100, -301, 32767, 32767, -32768, -32768, 32767, -32768]);
    expect([...stereoToMono(st)]).toEqual([200, -200, 32767, -32768, 0]);
  });

  it("cancels a channel pair in antiphase and keeps one in phase", () => {
    const n = 800;
    const s = sine(n, 10000, 0.01);
    const inPhase = new Int16Array(2 * n);
    const antiPhase = new Int16Array(2 * n);
    for (let i = 0; i < n; i++) {
      inPhase[2 * i] = inPhase[2 * i + 1] = s[i]!;
      antiPhase[2 * i] = s[i]!;
      antiPhase[2 * i + 1] = -s[i]!;
    }
    expect(stereoToMono(inPhase)).toEqual(s);
    expect(levelDbfs(stereoToMono(antiPhase))).toBe(Number.NEGATIVE_INFINITY);
  });

  it("rejects an odd number of samples", () => {
    expect(() => stereoToMono(new Int16Array(3))).toThrow(/not a whole number of L\/R pairs/);
  });
});

describe("levelDbfs", () => {
  it("reads a full-scale sine as -3.01 dBFS and a full-scale square as 0 dBFS", () => {
    // 100 whole cycles, so the mean of sin² is exactly 1/2.
    expect(levelDbfs(sine(8000, 32767, 1 / 80))).toBeCloseTo(-3.0103, 3);
    const square = new Int16Array(1000).map((_, i) => (i % 2 ? -32768 : 32767));
    expect(levelDbfs(square)).toBeCloseTo(0, 3);
  });

  it("scales 20·log10 with amplitude", () => {
    expect(levelDbfs(sine(8000, 3277, 1 / 80))).toBeCloseTo(-3.0103 - 20, 2);
    expect(levelDbfs(new Int16Array([1]))).toBeCloseTo(20 * Math.log10(1 / 32768), 6);
  });

  it("is -Infinity for digital silence and for an empty buffer", () => {
    expect(levelDbfs(new Int16Array(160))).toBe(Number.NEGATIVE_INFINITY);
    expect(levelDbfs(new Int16Array(0))).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe("applyGain", () => {
  it("changes the level by the gain in dB", () => {
    const s = sine(8000, 8000, 1 / 80);
    expect(levelDbfs(applyGain(s, dbToGain(-6))) - levelDbfs(s)).toBeCloseTo(-6, 2);
    expect(levelDbfs(applyGain(s, dbToGain(6))) - levelDbfs(s)).toBeCloseTo(6, 2);
  });

  it("rounds and clamps instead of wrapping", () => {
    expect([...applyGain(new Int16Array([20000, -20000, 3, -3]), 2)]).toEqual([32767, -32768, 6, -6]);
    expect([...applyGain(new Int16Array([3, -3, 5]), 0.5)]).toEqual([2, -1, 3]);
  });
});

describe("frameSamples", () => {
  it("counts samples per frame", () => {
    expect(frameSamples(8000)).toBe(160);
    expect(frameSamples(16000)).toBe(320);
    expect(frameSamples(48000)).toBe(960);
    expect(frameSamples(24000, 40)).toBe(960);
    expect(frameSamples(22050, 20)).toBe(441);
  });

  it("refuses a frame that is not a whole number of samples", () => {
    expect(() => frameSamples(22050, 10)).toThrow(/not a whole positive number/);
  });
});

describe("Framer", () => {
  it("reassembles random chunks (including empty and 1-sample ones) into exact frames", () => {
    const total = 5000;
    const stream = new Int16Array(total).map((_, i) => (i * 7919) % 65536);
    const framer = new Framer(160);
    const frames: Int16Array[] = [];
    let seed = 12345;
    let pos = 0;
    while (pos < total) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const size = Math.min(total - pos, [0, 1, 2, 159, 160, 161, 400][seed % 7]!);
      frames.push(...framer.push(stream.subarray(pos, pos + size)));
      pos += size;
      expect(framer.pending).toBe(pos - frames.length * 160);
    }
    expect(frames.length).toBe(Math.floor(total / 160));
    const last = framer.flush();
    expect(last).not.toBeNull();
    expect(framer.pending).toBe(0);
    expect(framer.flush()).toBeNull();
    const joined = new Int16Array((frames.length + 1) * 160);
    [...frames, last!].forEach((f, i) => {
      expect(f.length).toBe(160);
      joined.set(f, i * 160);
    });
    expect(joined.subarray(0, total)).toEqual(stream);
    expect(joined.subarray(total).every((v) => v === 0)).toBe(true);
  });

  it("returns frames the caller can keep: later pushes never overwrite them", () => {
    const framer = new Framer(4);
    const chunk = new Int16Array([1, 2, 3, 4, 5, 6]);
    const [a] = framer.push(chunk);
    chunk.fill(9);
    const [b] = framer.push(new Int16Array([7, 8]));
    framer.push(new Int16Array([10, 11, 12, 13]));
    expect([...a!]).toEqual([1, 2, 3, 4]);
    expect([...b!]).toEqual([5, 6, 7, 8]);
  });
});

describe("Framer.cut", () => {
  it("gives the frames push() gives, on random chunks, in one reused buffer", () => {
    const total = 5000;
    const stream = new Int16Array(total).map((_, i) => (i * 7919) % 65536);
    const pushed = new Framer(160);
    const cut = new Framer(160);
    const expected: Int16Array[] = [];
    const got: Int16Array[] = [];
    const buffers = new Set<Int16Array>();
    let seed = 777;
    for (let pos = 0; pos < total; ) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const size = Math.min(total - pos, [0, 1, 2, 159, 160, 161, 400][seed % 7]!);
      const chunk = stream.slice(pos, pos + size);
      expected.push(...pushed.push(chunk));
      cut.cut(chunk, (f) => {
        if (f !== chunk) buffers.add(f);
        got.push(f.slice());
      });
      pos += size;
      expect(cut.pending).toBe(pushed.pending);
    }
    expect(got).toEqual(expected);
    expect(buffers.size).toBe(1);
    expect(cut.flush()).toEqual(pushed.flush());
  });

  it("passes a chunk of exactly one frame on as it is when nothing is held back", () => {
    const framer = new Framer(4);
    const chunk = new Int16Array([1, 2, 3, 4]);
    const seen: Int16Array[] = [];
    framer.cut(chunk, (f) => seen.push(f));
    expect(seen[0]).toBe(chunk);
    framer.cut(new Int16Array([5]), (f) => seen.push(f));
    framer.cut(chunk, (f) => seen.push(f.slice()));
    expect(seen.slice(1)).toEqual([new Int16Array([5, 1, 2, 3])]);
    expect(framer.pending).toBe(1);
  });

  it("reset() drops what is held; flush() pads with silence, not an older frame", () => {
    const framer = new Framer(4);
    const none = () => {
      throw new Error("no frame expected");
    };
    framer.cut(new Int16Array([1, 2, 3, 4, 5, 6]), () => {});
    framer.reset();
    expect(framer.pending).toBe(0);
    framer.cut(new Int16Array([7]), none);
    expect([...framer.flush()!]).toEqual([7, 0, 0, 0]);
  });
});
