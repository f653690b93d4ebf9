// A recorded room under the noisy set's callers (`--noise ./cafe.wav:16`): the synthesized rooms
// are all the project can make here, and an operator knows their own hotline's room best. Any
// file ffmpeg reads, taken as the line carries it (mono, 8 kHz); played from a seeded point and
// looped, so every run of a draw hears the same stretch of it.
import { readFile } from "node:fs/promises";
import { ffmpegDecode } from "../../src/service/speech/ffmpeg.ts";
import { CALL_RATE } from "./turns-cases.ts";

/** The shortest recording worth looping under a call, s: shorter, the loop itself is heard. */
const MIN_SECONDS = 2;
/** Where a loop joins its start, the two are crossfaded over this long, so no click is heard. */
const JOIN_MS = 50;

const decoded = new Map<string, Float64Array>();

/**
 * Decodes `path` to mono 8 kHz, full scale 1, for recordedRoom (once per process). Rejects, naming
 * the file, when it is missing, unreadable, shorter than MIN_SECONDS or silent.
 */
export async function loadRecording(path: string): Promise<void> {
  if (decoded.has(path)) return;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch {
    throw new Error(`--noise: no recording at ${path}`);
  }
  let samples: Int16Array;
  try {
    samples = await ffmpegDecode(bytes, CALL_RATE);
  } catch (err) {
    throw new Error(`--noise: ffmpeg could not read ${path} as audio: ${(err as Error).message}`);
  }
  if (samples.length < MIN_SECONDS * CALL_RATE)
    throw new Error(
      `--noise: ${path} holds ${(samples.length / CALL_RATE).toFixed(1)} s of audio; a room needs at least ${MIN_SECONDS} s`,
    );
  if (samples.every((v) => v === 0)) throw new Error(`--noise: ${path} is silent`);
  const pcm = Float64Array.from(samples, (v) => v / 32768);
  decoded.set(path, pcm);
}

/**
 * `n` samples of the recording at `path` (loadRecording loaded it) from a seeded point, looped
 * with a crossfade.
 */
export function recordedRoom(path: string, n: number, rand: () => number): Float64Array {
  const src = decoded.get(path);
  if (!src) throw new Error(`${path} was not loaded (loadRecording)`);
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
