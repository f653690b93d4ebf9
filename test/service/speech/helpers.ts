// Shared by the speech e2e tests: independent decoding (ffmpeg, sox), word error rate, a client.
import { execFileSync } from "node:child_process";
import { SvcClient } from "../../../src/api/client.ts";

/** Decodes any audio file with the ffmpeg binary to mono s16le at `rate`. */
export function ffmpegToPcm(bytes: Uint8Array, rate: number, inputArgs: string[] = []): Int16Array {
  const out = execFileSync(
    "ffmpeg",
    [
      "-hide_banner",
      "-loglevel",
      "error",
      ...inputArgs,
      "-i",
      "pipe:0",
      "-ac",
      "1",
      "-ar",
      String(rate),
      "-f",
      "s16le",
      "pipe:1",
    ],
    { input: bytes, maxBuffer: 64 * 1024 * 1024 },
  );
  return new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
}

/** ffprobe's view of a file: codec, sample rate, channels. */
export function probe(
  bytes: Uint8Array,
  inputArgs: string[] = [],
): { codec: string; rate: number; channels: number } {
  const out = execFileSync(
    "ffprobe",
    [
      "-v",
      "error",
      ...inputArgs,
      "-show_entries",
      "stream=codec_name,sample_rate,channels",
      "-of",
      "json",
      "pipe:0",
    ],
    { input: bytes },
  ).toString();
  const s = (
    JSON.parse(out) as { streams: Array<{ codec_name: string; sample_rate: string; channels: number }> }
  ).streams[0]!;
  return { codec: s.codec_name, rate: Number(s.sample_rate), channels: s.channels };
}

/** Word error rate: edit distance over reference words. */
export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const r = reference.toLowerCase().split(/\s+/).filter(Boolean);
  const h = hypothesis.toLowerCase().split(/\s+/).filter(Boolean);
  const d = Array.from({ length: r.length + 1 }, (_, i) => [i, ...new Array<number>(h.length).fill(0)]);
  for (let j = 1; j <= h.length; j++) d[0]![j] = j;
  for (let i = 1; i <= r.length; i++) {
    for (let j = 1; j <= h.length; j++) {
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1),
      );
    }
  }
  return { errors: d[r.length]![h.length]!, words: r.length };
}

export function clientFor(url: string, key: string, planTier = false): SvcClient {
  return new SvcClient({ baseURL: url, apiKey: key, planTier, maxRetries: 0 });
}

export function rms(pcm: Int16Array): number {
  let s = 0;
  for (const x of pcm) s += x * x;
  return Math.sqrt(s / Math.max(1, pcm.length));
}
