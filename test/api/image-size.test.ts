import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { imageDimensions } from "../../src/api/image-size.ts";

const dir = mkdtempSync(join(tmpdir(), "imgsize-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Encode a test image with ffmpeg; ffprobe's reading of it is the reference. */
function make(
  ext: string,
  w: number,
  h: number,
  extra: string[] = [],
): { bytes: Uint8Array; width: number; height: number } {
  const file = join(dir, `${w}x${h}${extra.join("")}.${ext}`);
  execFileSync("ffmpeg", [
    "-v",
    "error",
    "-y",
    "-f",
    "lavfi",
    "-i",
    `testsrc=s=${w}x${h}`,
    "-frames:v",
    "1",
    ...extra,
    file,
  ]);
  const probe = execFileSync("ffprobe", [
    "-v",
    "error",
    "-select_streams",
    "v:0",
    "-show_entries",
    "stream=width,height",
    "-of",
    "csv=p=0",
    file,
  ])
    .toString()
    .trim()
    .split(",")
    .map(Number);
  return { bytes: readFileSync(file), width: probe[0]!, height: probe[1]! };
}

describe("imageDimensions", () => {
  for (const [ext, extra] of [
    ["png", []],
    ["jpg", []],
    ["gif", []],
    ["webp", []],
    ["webp", ["-lossless", "1"]],
  ] as Array<[string, string[]]>) {
    it(`reads ${ext}${extra.length ? " (lossless)" : ""} headers as ffprobe does`, () => {
      for (const [w, h] of [
        [37, 21],
        [300, 1100],
      ] as const) {
        const img = make(ext, w, h, extra);
        expect(imageDimensions(img.bytes)).toEqual({ width: img.width, height: img.height });
      }
    });
  }

  it("returns undefined for bytes that are not an image it knows", () => {
    expect(imageDimensions(new TextEncoder().encode("not an image at all, just text"))).toBeUndefined();
  });
});
