// Real media fixtures for service tests, made by ffmpeg and sox (independent tools) into a temp dir.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "svc-media-"));
const cache = new Map<string, string>();

function ffmpeg(name: string, args: string[]): string {
  const out = join(dir, name);
  if (!cache.has(name)) {
    execFileSync("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args, out]);
    cache.set(name, out);
  }
  return out;
}

export const media = {
  png: () => ffmpeg("red.png", ["-f", "lavfi", "-i", "color=red:s=64x48", "-frames:v", "1"]),
  jpeg: () => ffmpeg("blue.jpg", ["-f", "lavfi", "-i", "color=blue:s=320x200", "-frames:v", "1"]),
  webp: () =>
    ffmpeg("green.webp", ["-f", "lavfi", "-i", "color=green:s=100x50", "-frames:v", "1", "-c:v", "libwebp"]),
  gif: () => ffmpeg("still.gif", ["-f", "lavfi", "-i", "color=white:s=40x30", "-frames:v", "1"]),
  animatedGif: () => ffmpeg("anim.gif", ["-f", "lavfi", "-i", "testsrc=s=40x30:r=5:d=1", "-loop", "0"]),
  /** 2.5 s of H.264 video with a sine soundtrack, MP4 container. */
  mp4: () =>
    ffmpeg("clip.mp4", [
      "-f",
      "lavfi",
      "-i",
      "testsrc=s=160x120:r=10:d=2.5",
      "-f",
      "lavfi",
      "-i",
      "sine=f=440:d=2.5",
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
      "-shortest",
    ]),
  mov: () =>
    ffmpeg("clip.mov", ["-f", "lavfi", "-i", "testsrc=s=64x48:r=5:d=1", "-c:v", "mjpeg", "-f", "mov"]),
  /** 1 s 440 Hz sine, 16 kHz mono WAV, made by sox. */
  wav: () => {
    const out = join(dir, "tone.wav");
    if (!cache.has("tone.wav")) {
      execFileSync("sox", ["-n", "-r", "16000", "-c", "1", "-b", "16", out, "synth", "1", "sine", "440"]);
      cache.set("tone.wav", out);
    }
    return out;
  },
  mp3: () => ffmpeg("tone.mp3", ["-f", "lavfi", "-i", "sine=f=440:d=1", "-c:a", "libmp3lame"]),
};

export function bytesOf(path: string): Buffer {
  return readFileSync(path);
}

export function dataUrl(path: string, mime: string): string {
  return `data:${mime};base64,${readFileSync(path).toString("base64")}`;
}
