// Shared by the benchmarks: CPU time per second of audio, and order statistics.
import { spawnSync } from "node:child_process";
import { resample } from "../../codecs/resample.ts";
import { parseWav } from "../../codecs/wav.ts";

/** Runs `work` until at least `minMs` of CPU time is spent; returns CPU µs per call. */
export function cpuMicrosPerCall(work: () => void, minMs = 300): number {
  for (let i = 0; i < 3; i++) work(); // warm-up: let the JIT settle
  let calls = 0;
  const start = process.cpuUsage();
  let spent = 0;
  while (spent < minMs * 1000) {
    work();
    calls += 1;
    const d = process.cpuUsage(start);
    spent = d.user + d.system;
  }
  return spent / calls;
}

/** The same for async work (awaited one call at a time). */
export async function cpuMicrosPerCallAsync(work: () => Promise<void>, minMs = 300): Promise<number> {
  for (let i = 0; i < 3; i++) await work();
  let calls = 0;
  const start = process.cpuUsage();
  let spent = 0;
  while (spent < minMs * 1000) {
    await work();
    calls += 1;
    const d = process.cpuUsage(start);
    spent = d.user + d.system;
  }
  return spent / calls;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export const round = (v: number, digits = 1) => Math.round(v * 10 ** digits) / 10 ** digits;

export interface EspeakVoice {
  /** espeak-ng voice, e.g. "en-gb" or "en-us+f3". Default "en-us". */
  voice?: string;
  /** Words per minute. Default 165. */
  wpm?: number;
  pitch?: number;
  /** The text is SSML (espeak-ng -m), e.g. for a `<break time="600ms"/>` inside a sentence. */
  ssml?: boolean;
}

/**
 * Real speech from espeak-ng, mono Int16 at `rate`. Repeatable to the sample: the resampling is
 * done in-process (sox would add dither seeded from the clock unless run with -R).
 */
export function espeakSpeech(text: string, rate: number, v: EspeakVoice = {}): Int16Array {
  const args = ["--stdout", "-v", v.voice ?? "en-us", "-s", String(v.wpm ?? 165)];
  if (v.pitch !== undefined) args.push("-p", String(v.pitch));
  if (v.ssml) args.push("-m");
  const r = spawnSync("espeak-ng", [...args, text], { maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`espeak-ng failed: ${r.stderr?.toString()}`);
  const wav = parseWav(new Uint8Array(r.stdout));
  return resample(wav.samples, wav.sampleRate, rate);
}
