// Content sniffing, image headers and GIF frame counts against files made by ffmpeg and sox.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { gifFrameCount } from "../../src/service/media/gif-frames.ts";
import { imageInfo } from "../../src/service/media/image-info.ts";
import { probeDuration } from "../../src/service/media/probe.ts";
import { sniff } from "../../src/service/media/sniff.ts";
import { media } from "./helpers/media.ts";

describe("sniff", () => {
  it.each([
    ["png", media.png, "image"],
    ["jpeg", media.jpeg, "image"],
    ["webp", media.webp, "image"],
    ["gif", media.gif, "image"],
    ["mp4", media.mp4, "video"],
    ["mov", media.mov, "video"],
    ["wav", media.wav, "audio"],
    ["mp3", media.mp3, "audio"],
  ])("recognizes %s", (format, file, kind) => {
    expect(sniff(readFileSync(file()))).toMatchObject({ format, kind });
  });

  it("recognizes nothing in text or an empty buffer", () => {
    expect(sniff(Buffer.from("GIF? no. RIFF? no."))).toBeUndefined();
    expect(sniff(Buffer.alloc(0))).toBeUndefined();
  });
});

describe("image headers and frames", () => {
  it.each([
    [media.png, 64, 48],
    [media.jpeg, 320, 200],
    [media.webp, 100, 50],
    [media.gif, 40, 30],
  ])("reads the size of %#", (file, width, height) => {
    const bytes = readFileSync(file());
    expect(imageInfo(bytes, sniff(bytes)!)).toMatchObject({ width, height });
  });

  it("counts GIF frames from a file and from memory", async () => {
    expect(await gifFrameCount(media.gif())).toBe(1);
    expect(await gifFrameCount(media.animatedGif())).toBe(2);
    expect(await gifFrameCount(readFileSync(media.animatedGif()), 100)).toBe(5);
    await expect(gifFrameCount(readFileSync(media.gif()).subarray(0, 30))).rejects.toThrow(/ends/);
  });

  it("measures durations with ffprobe", async () => {
    expect(await probeDuration(media.wav())).toBeCloseTo(1, 2);
    expect(await probeDuration(media.mp4())).toBeCloseTo(2.5, 1);
    await expect(probeDuration(media.png() + ".missing")).rejects.toThrow();
  });
});
