// Runs a real reference tool (sox, ffmpeg, espeak-ng) with bytes on stdin and returns its stdout.
import { spawnSync } from "node:child_process";

export function run(cmd: string, args: readonly string[], stdin?: Uint8Array): Uint8Array {
  const r = spawnSync(cmd, args, { input: stdin ?? new Uint8Array(0), maxBuffer: 64 << 20 });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}: ${r.stderr.toString()}`);
  }
  return new Uint8Array(r.stdout.buffer, r.stdout.byteOffset, r.stdout.byteLength);
}

/** Little-endian view of raw s16le bytes as samples (copies, so alignment never matters). */
export function s16le(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.byteLength >> 1);
  new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
  return out;
}

export function bytesOf(pcm: Int16Array): Uint8Array {
  return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}
