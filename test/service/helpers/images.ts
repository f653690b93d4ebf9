// Reading images in tests with sharp (decoding is the check that a result is an image), and
// finding set text in a picture without OCR: the pixels a caption changed, their dark "ink", lines
// of ink by row projection and words by the wide gaps of column projection.
import sharp from "sharp";

export interface Pixels {
  data: Buffer;
  width: number;
  height: number;
  channels: number;
  format: string;
}

export async function decode(bytes: Uint8Array): Promise<Pixels> {
  const img = sharp(bytes);
  const meta = await img.metadata();
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels, format: meta.format ?? "" };
}

/** Mean of each channel (0–255). */
export function means(p: Pixels): number[] {
  const sums = new Array<number>(p.channels).fill(0);
  for (let i = 0; i < p.data.length; i++) sums[i % p.channels]! += p.data[i]!;
  return sums.map((s) => s / (p.width * p.height));
}

/** A test picture with a distinct colour at every point: red grows left to right, green top to bottom. */
export async function gradientPng(
  width: number,
  height: number,
  format: "png" | "jpeg" = "png",
): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 3;
      raw[o] = Math.round((255 * x) / Math.max(1, width - 1));
      raw[o + 1] = Math.round((255 * y) / Math.max(1, height - 1));
      raw[o + 2] = (x * 7 + y * 3) % 256;
    }
  }
  const img = sharp(raw, { raw: { width, height, channels: 3 } });
  return format === "png" ? img.png().toBuffer() : img.jpeg({ quality: 95 }).toBuffer();
}

/**
 * Words of text drawn onto `withText` that `without` (the same picture without the text) lacks:
 * ink = changed pixels darker than `inkLuma`; lines = runs of rows holding ink; in each line the
 * gaps between ink columns fall in two groups, letter gaps and word gaps, split where the two
 * groups separate best (Otsu's threshold over all gaps of the text).
 */
export function wordBoxes(
  withText: Pixels,
  without: Pixels,
  inkLuma = 90,
): Array<{ line: number; width: number }> {
  const { width, height, channels } = withText;
  const ink = new Uint8Array(width * height);
  for (let i = 0; i < width * height; i++) {
    let diff = 0;
    for (let c = 0; c < 3; c++)
      diff += Math.abs(withText.data[i * channels + c]! - without.data[i * channels + c]!);
    const luma =
      0.299 * withText.data[i * channels]! +
      0.587 * withText.data[i * channels + 1]! +
      0.114 * withText.data[i * channels + 2]!;
    ink[i] = diff > 30 && luma < inkLuma ? 1 : 0;
  }
  const rowHas = (y: number) => ink.subarray(y * width, (y + 1) * width).some((v) => v === 1);
  const lines: number[][] = []; // ink columns of each line
  for (let y = 0; y < height; y++) {
    if (!rowHas(y)) continue;
    const top = y;
    while (y + 1 < height && rowHas(y + 1)) y++;
    const cols: number[] = [];
    for (let x = 0; x < width; x++) {
      for (let r = top; r <= y; r++) {
        if (ink[r * width + x]) {
          cols.push(x);
          break;
        }
      }
    }
    lines.push(cols);
  }
  const gapsOf = (cols: number[]) => cols.slice(1).map((x, k) => x - cols[k]! - 1);
  const threshold = splitPoint(lines.flatMap((cols) => gapsOf(cols).filter((g) => g > 0)));
  const words: Array<{ line: number; width: number }> = [];
  lines.forEach((cols, line) => {
    let start = cols[0]!;
    gapsOf(cols).forEach((g, k) => {
      if (g > threshold) {
        words.push({ line, width: cols[k]! - start + 1 });
        start = cols[k + 1]!;
      }
    });
    words.push({ line, width: cols.at(-1)! - start + 1 });
  });
  return words;
}

/** Otsu's split of gap sizes into two groups; +∞ when they do not form two distinct groups. */
function splitPoint(gaps: number[]): number {
  const g = [...gaps].sort((a, b) => a - b);
  let best = Number.POSITIVE_INFINITY;
  let bestScore = 0;
  for (let k = 1; k < g.length; k++) {
    const lo = g.slice(0, k);
    const hi = g.slice(k);
    const mLo = lo.reduce((a, b) => a + b, 0) / lo.length;
    const mHi = hi.reduce((a, b) => a + b, 0) / hi.length;
    const score = lo.length * hi.length * (mHi - mLo) ** 2;
    if (score > bestScore && mHi > 1.8 * mLo) {
      bestScore = score;
      best = (g[k - 1]! + g[k]!) / 2;
    }
  }
  return best;
}
