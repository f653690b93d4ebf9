// A recorded room under the noisy set's callers (`--noise ./cafe.wav:16`): the synthesized rooms
// are all the project can make here, and an operator knows their own hotline's room best. Any
// file ffmpeg reads, taken as the line carries it (mono, 8 kHz); played from a seeded point and
// looped, so every run of a draw hears the same stretch of it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { CALL_RATE } from "./turns-cases.ts";

/** The shortest recording worth looping under a call, s: shorter, the loop itself is heard. */
const MIN_SECONDS = 2;
/** Where a loop joins its start, the two are crossfaded over this long, so no click is heard. */
const JOIN_MS = 50;

const decoded = new Map<string, Float64Array>();

/**
 * `path` decoded to mono 8 kHz, full scale 1 (once per process). Throws, naming the file, when it
 * is missing, unreadable, shorter than MIN_SECONDS or silent.
 */
export function loadRecording(path: string): Float64Array {
  const had = decoded.get(path);
  if (had) return had;
  if (!existsSync(path)) throw new Error(`--noise: no recording at ${path}`);
  let raw: Buffer;
  try {
    raw = execFileSync(
      "ffmpeg",
      [
        "-hide_banner",
        "-loglevel",
        "error",
        "-nostdin",
        "-i",
        path,
        "-f",
        "s16le",
        "-ac",
        "1",
        "-ar",
        `${CALL_RATE}`,
        "-",
      ],
      { maxBuffer: 1 << 30, stdio: ["ignore", "pipe", "pipe"] },
    );
  } catch (err) {
    const why = (err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message;
    throw new Error(`--noise: ffmpeg could not read ${path} as audio: ${why}`);
  }
  const samples = new Int16Array(raw.buffer, raw.byteOffset, raw.length >> 1);
  if (samples.length < MIN_SECONDS * CALL_RATE)
    throw new Error(
      `--noise: ${path} holds ${(samples.length / CALL_RATE).toFixed(1)} s of audio; a room needs at least ${MIN_SECONDS} s`,
    );
  if (samples.every((v) => v === 0)) throw new Error(`--noise: ${path} is silent`);
  const pcm = Float64Array.from(samples, (v) => v / 32768);
  decoded.set(path, pcm);
  return pcm;
}

/** `n` samples of the recording at `path` from a seeded point, looped with a crossfade. */
export function recordedRoom(path: string, n: number, rand: () => number): Float64Array {
  const src = loadRecording(path);
  const join = Math.round((JOIN_MS * CALL_RATE) / 1000);
  // Each pass plays `period` samples; its first `join` fade in over the recording's last `join`,
  // which fade out, so the pass before runs on into it without a step.
  const period = src.length - join;
  const out = new Float64Array(n);
  let at = Math.floor(rand() * period);
  for (let i = 0; i < n; i++, at = (at + 1) % period)
    out[i] = at >= join ? src[at]! : (src[at]! * at + src[period + at]! * (join - at)) / join;
  return out;
}
