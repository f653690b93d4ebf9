// Encoding PCM to mp3 and flac with the ffmpeg binary, spawned directly (no wrapper library). This is
// off the call path: E4 files and the sentence-level E5 formats.
import { spawn } from "node:child_process";

export type FfmpegFormat = "mp3" | "flac";

const OUTPUT_ARGS: Readonly<Record<FfmpegFormat, readonly string[]>> = {
  // No Xing/ID3 headers: the bytes are a bare MPEG audio stream, so encodings concatenate.
  mp3: ["-c:a", "libmp3lame", "-b:a", "64k", "-write_xing", "0", "-id3v2_version", "0", "-f", "mp3"],
  flac: ["-c:a", "flac", "-compression_level", "5", "-f", "flac"],
};

interface FfmpegRun {
  code: number | null;
  out: Buffer;
  /** The tail of what ffmpeg wrote to stderr. */
  err: string;
}

/** Runs ffmpeg with `input` on stdin; resolves with its exit code, stdout and stderr's tail. */
function runFfmpeg(args: readonly string[], input: Uint8Array): Promise<FfmpegRun> {
  return new Promise((resolve, reject) => {
    const proc = spawn("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", ...args], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    let err = "";
    proc.stdout.on("data", (d: Buffer) => out.push(d));
    proc.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
    });
    proc.on("error", (e) => reject(new Error(`ffmpeg could not start: ${e.message}`)));
    proc.on("close", (code) => resolve({ code, out: Buffer.concat(out), err }));
    proc.stdin.on("error", () => {}); // reported by 'close'
    proc.stdin.end(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
  });
}

/** Encodes mono s16le PCM at `rate` into a complete file of the format. */
export async function ffmpegEncode(pcm: Int16Array, rate: number, format: FfmpegFormat): Promise<Uint8Array> {
  const args = ["-f", "s16le", "-ar", String(rate), "-ac", "1", "-i", "pipe:0", ...OUTPUT_ARGS[format]];
  const { code, out, err } = await runFfmpeg(
    [...args, "pipe:1"],
    new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength),
  );
  if (code !== 0) throw new Error(`ffmpeg ${format} encoding failed (exit ${code}): ${err.trim()}`);
  return new Uint8Array(out);
}

/**
 * Decodes any audio file ffmpeg reads (ogg, mp3, wav, …) to mono s16le PCM at `rate`.
 * Rejects with ffmpeg's message when the bytes are not audio it understands.
 */
export async function ffmpegDecode(bytes: Uint8Array, rate: number): Promise<Int16Array> {
  const args = ["-i", "pipe:0", "-vn", "-ac", "1", "-ar", String(rate), "-f", "s16le", "pipe:1"];
  const { code, out, err } = await runFfmpeg(args, bytes);
  if (code !== 0 || (out.length === 0 && err)) {
    throw new Error(err.trim().split("\n").pop() || `ffmpeg exited with ${code}`);
  }
  const pcm = new Int16Array(out.length >> 1);
  Buffer.from(pcm.buffer).set(out.subarray(0, pcm.length * 2));
  return pcm;
}
