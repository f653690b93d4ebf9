import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { lookaheadSamples, Resampler, resample } from "../../codecs/resample.ts";
import { db, fitTone, rms, tone } from "./helpers/tone.ts";

const RATES = [8000, 16000, 22050, 24000, 48000];
const PAIRS = RATES.flatMap((a) => RATES.filter((b) => b !== a).map((b) => [a, b] as const));
const AMPLITUDE = 20000;

// Stated tolerances (design: Kaiser, 64 dB, transition 0.9–1.1 × the lower Nyquist).
const PASSBAND_DB = 0.02; // |gain| error for tones up to 0.9 × the lower Nyquist
const REJECTION_DB = 60; // aliases and images landing in the passband
const DELAY_SAMPLES = 1e-3; // residual time offset between input and output

/** Deterministic pseudo-random numbers (LCG), so failures reproduce. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function noise(samples: number, seed: number): Int16Array {
  const rnd = lcg(seed);
  return new Int16Array(samples).map(() => Math.round((rnd() * 2 - 1) * 30000));
}

/** Output samples near the ends that see the zero padding beyond the input. */
function margin(from: number, to: number): number {
  return Math.ceil(((2 * lookaheadSamples(from, to) + 64) * to) / from);
}

describe.each(PAIRS)("Resampler %i → %i Hz", (from, to) => {
  const lowerNyquist = Math.min(from, to) / 2;

  it("gives ceil(n·to/from) samples for a whole buffer of n", () => {
    for (const n of [0, 1, 2, 3, 7, 160, 441, 1000]) {
      expect(resample(new Int16Array(n), from, to).length).toBe(Math.ceil((n * to) / from));
    }
  });

  it("gives the same output whatever the chunking (random chunks, empty and 1-sample ones)", () => {
    const input = noise(Math.round(from * 0.25) + 17, from + to);
    const whole = resample(input, from, to);
    const rnd = lcg(to);
    const r = new Resampler(from, to);
    const parts: Int16Array[] = [];
    for (let pos = 0; pos < input.length; ) {
      const size = Math.min(input.length - pos, [0, 1, 1, 2, 3, 160, 441, 997][Math.floor(rnd() * 8)]!);
      const expected = r.outputLength(size);
      const out = r.push(input.subarray(pos, pos + size));
      expect(out.length).toBe(expected);
      parts.push(out);
      pos += size;
    }
    parts.push(r.flush());
    expect(concatPcm(parts)).toEqual(whole);
  });

  it(`is flat within ±${PASSBAND_DB} dB, time-aligned and free of images up to 0.9 × ${lowerNyquist} Hz`, () => {
    const n = Math.round(from * 0.3);
    const edge = margin(from, to);
    for (let k = 1; k <= 18; k++) {
      const f = (k / 20) * lowerNyquist;
      const y = resample(tone(n, from, f, AMPLITUDE), from, to);
      const fit = fitTone(y, to, f, edge, y.length - edge);
      const where = `${f} Hz`;
      expect(Math.abs(db(fit.amplitude / AMPLITUDE)), where).toBeLessThan(PASSBAND_DB);
      // Phase of the output tone against sin(2π f t) at the output's own sample instants.
      expect(Math.abs(fit.phase / ((2 * Math.PI * f) / to)), where).toBeLessThan(DELAY_SAMPLES);
      // Everything else (images of the tone, aliases) relative to the tone.
      expect(db(fit.residualRms / fit.amplitude / Math.SQRT1_2), where).toBeLessThan(-REJECTION_DB);
    }
  });

  it("passes a constant through exactly, apart from the ramps at the ends", () => {
    const y = resample(new Int16Array(from / 10).fill(-12345), from, to);
    const edge = margin(from, to);
    expect(y.subarray(edge, y.length - edge).every((v) => v === -12345)).toBe(true);
  });
});

// Downsampling with a stopband below the input's Nyquist frequency (not 24000 → 22050).
const DOWN_PAIRS = PAIRS.filter(([from, to]) => to < from && 1.1 * (to / 2) < from / 2);

describe.each(DOWN_PAIRS)("Resampler %i → %i Hz", (from, to) => {
  it(`attenuates input above 1.1 × ${to / 2} Hz by ≥ ${REJECTION_DB} dB`, () => {
    const n = Math.round(from * 0.3);
    const edge = margin(from, to);
    const lo = 1.1 * (to / 2);
    const hi = from / 2;
    for (let k = 0; k < 40; k++) {
      const f = lo + ((hi - lo) * k) / 40;
      const y = resample(tone(n, from, f, AMPLITUDE), from, to);
      expect(db(rms(y, edge, y.length - edge) / (AMPLITUDE * Math.SQRT1_2)), `${f} Hz`).toBeLessThan(
        -REJECTION_DB,
      );
    }
  });
});

describe("Resampler", () => {
  it("maps an impulse to a pulse centred on the same instant", () => {
    const x = new Int16Array(400);
    x[100] = 16000;
    const up = resample(x, 8000, 16000);
    let peak = 0;
    for (let i = 0; i < up.length; i++) if (Math.abs(up[i]!) > Math.abs(up[peak]!)) peak = i;
    expect(peak).toBe(200);
    expect(up[200]).toBe(16000);
    // Linear phase: the pulse is symmetric about its centre.
    for (let d = 1; d < 60; d++) expect(up[200 + d]).toBe(up[200 - d]);

    const down = resample(x, 24000, 8000);
    expect(down.indexOf(Math.max(...down))).toBe(Math.round(100 / 3));
  });

  it("clips instead of wrapping when a full-scale signal overshoots", () => {
    // A full-scale square wave rings (Gibbs) past full scale after band-limiting.
    const square = new Int16Array(1600).map((_, i) => (Math.floor(i / 20) % 2 ? -32768 : 32767));
    const y = resample(square, 8000, 16000);
    expect(Math.max(...y)).toBe(32767);
    expect(Math.min(...y)).toBe(-32768);
    // Wrapping would put large values of the wrong sign next to the peaks.
    for (let i = 1; i < y.length; i++) expect(Math.abs(y[i]! - y[i - 1]!)).toBeLessThan(40000);
  });

  it("copies the input unchanged at the same rate", () => {
    const x = noise(1000, 3);
    const r = new Resampler(16000, 16000);
    const y = r.push(x);
    expect(y).toEqual(x);
    expect(y).not.toBe(x);
    expect(r.flush().length).toBe(0);
    expect(resample(x, 8000, 8000)).toEqual(x);
  });

  it("starts a fresh stream after flush", () => {
    const x = noise(3000, 9);
    const r = new Resampler(22050, 8000);
    const first = concatPcm([r.push(x), r.flush()]);
    const second = concatPcm([r.push(x), r.flush()]);
    expect(second).toEqual(first);
  });

  it("converts inputs longer than one internal block the same as in small chunks", () => {
    const x = noise(40000, 11);
    const whole = resample(x, 48000, 16000);
    const r = new Resampler(48000, 16000);
    const parts: Int16Array[] = [];
    for (let i = 0; i < x.length; i += 960) parts.push(r.push(x.subarray(i, i + 960)));
    parts.push(r.flush());
    expect(concatPcm(parts)).toEqual(whole);
  });

  it("writes into a caller buffer with pushInto and refuses one that is too small", () => {
    const x = noise(480, 5);
    const a = new Resampler(24000, 8000);
    const b = new Resampler(24000, 8000);
    const expected = a.push(x);
    const buf = new Int16Array(1000);
    const n = b.pushInto(x, buf);
    expect(n).toBe(expected.length);
    expect(buf.subarray(0, n)).toEqual(expected);
    expect(() => b.pushInto(x, new Int16Array(10))).toThrow(/output holds 10 samples, 160 needed/);
  });

  it("rejects rates that are not positive integers", () => {
    expect(() => new Resampler(0, 8000)).toThrow(/fromRate must be a positive integer/);
    expect(() => new Resampler(8000, 44100.5)).toThrow(/toRate must be a positive integer/);
    expect(() => new Resampler(44101, 48000)).toThrow(/reduces to 48000\/44101; factors above 4096/);
  });

  it("has a look-ahead of a few milliseconds on the telephony paths", () => {
    // Latency the caller hears: look-ahead in input samples / input rate.
    expect((lookaheadSamples(8000, 16000) / 8000) * 1000).toBeLessThan(5);
    expect((lookaheadSamples(24000, 8000) / 24000) * 1000).toBeLessThan(5);
    expect(lookaheadSamples(8000, 8000)).toBe(0);
  });
});
