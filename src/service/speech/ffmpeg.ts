// Encoding PCM to mp3 and flac with the ffmpeg binary, spawned directly (no wrapper library). This is
// off the call path: E4 files and the sentence-level E5 formats.
import { spawn } from "node:child_process";

export type FfmpegFormat = "mp3" | "flac";

const OUTPUT_ARGS: Readonly<Record<FfmpegFormat, readonly string[]>> = {
  // No Xing/ID3 headers: the bytes are a bare MPEG audio stream, so encodings concatenate.
  mp3: ["-c:a", "libmp3lame", "-b:a", "64k", "-write_xing", "0", "-id3v2_version", "0", "-f", "mp3"],
  flac: ["-c:a", "flac", "-compression_level", "5", "-f", "flac"],
};

/** Encodes mono s16le PCM at `rate` into a complete file of the format. */
export function ffmpegEncode(pcm: Int16Array, rate: number, format: FfmpegFormat): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const args = ["-hide_banner", "-loglevel", "error", "-nostdin", "-f", "s16le", "-ar", String(rate)];
    args.push("-ac", "1", "-i", "pipe:0", ...OUTPUT_ARGS[format], "pipe:1");
    const proc = spawn("ffmpeg", args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    proc.stdout.on("data", (d: Buffer) => out.push(d));
    proc.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
    });
    proc.on("error", (e) => reject(new Error(`ffmpeg could not start: ${e.message}`)));
    proc.on("close", (code) => {
      if (code === 0) resolve(new Uint8Array(Buffer.concat(out)));
      else reject(new Error(`ffmpeg ${format} encoding failed (exit ${code}): ${err.trim()}`));
    });
    proc.stdin.on("error", () => {}); // reported by 'close'
    proc.stdin.end(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  });
}

/**
 * Decodes any audio file ffmpeg reads (ogg, mp3, wav, …) to mono s16le PCM at `rate`.
 * Rejects with ffmpeg's message when the bytes are not audio it understands.
 */
export function ffmpegDecode(bytes: Uint8Array, rate: number): Promise<Int16Array> {
  return new Promise((resolve, reject) => {
    const args = ["-hide_banner", "-loglevel", "error", "-nostdin", "-i", "pipe:0"];
    args.push("-vn", "-ac", "1", "-ar", String(rate), "-f", "s16le", "pipe:1");
    const proc = spawn("ffmpeg", args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let err = "";
    proc.stdout.on("data", (d: Buffer) => out.push(d));
    proc.stderr.on("data", (d: Buffer) => {
      err = (err + d.toString()).slice(-2000);
    });
    proc.on("error", (e) => reject(new Error(`ffmpeg could not start: ${e.message}`)));
    proc.on("close", (code) => {
      const buf = Buffer.concat(out);
      if (code !== 0 || (buf.length === 0 && err)) {
        reject(new Error(err.trim().split("\n").pop() || `ffmpeg exited with ${code}`));
        return;
      }
      const pcm = new Int16Array(buf.length >> 1);
      Buffer.from(pcm.buffer).set(buf.subarray(0, pcm.length * 2));
      resolve(pcm);
    });
    proc.stdin.on("error", () => {});
    proc.stdin.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
}
