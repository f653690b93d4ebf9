// Media duration by ffprobe (the Debian binary, spawned directly; off the call path).
import { execFile } from "node:child_process";

/** Duration in seconds of the audio or video file at `path`; rejects when ffprobe cannot read it. */
export function probeDuration(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      "ffprobe",
      ["-v", "error", "-show_entries", "format=duration", "-of", "default=noprint_wrappers=1:nokey=1", path],
      { timeout: 15_000 },
      (err, stdout, stderr) => {
        const seconds = Number.parseFloat(stdout.trim());
        if (err || !Number.isFinite(seconds)) {
          reject(new Error(stderr.trim().split("\n").pop() || err?.message || "no duration"));
        } else {
          resolve(seconds);
        }
      },
    );
  });
}
