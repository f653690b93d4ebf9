// Colours of a procedural picture: colour and scene words of the prompt first ("red", "ocean",
// "sunset" …), then colours drawn from the seeded generator. Words of the negative prompt (when it
// is honoured) take their colours out.
import type { Random } from "./prng.ts";

export type Rgb = readonly [number, number, number];

const WORD_COLOURS: Readonly<Record<string, readonly Rgb[]>> = {
  red: [[220, 40, 40]],
  green: [[50, 170, 70]],
  blue: [[40, 90, 220]],
  yellow: [[245, 215, 50]],
  orange: [[245, 140, 30]],
  purple: [[130, 60, 180]],
  violet: [[140, 90, 210]],
  pink: [[240, 130, 180]],
  brown: [[130, 85, 45]],
  black: [[20, 20, 24]],
  white: [[245, 245, 245]],
  gray: [[128, 128, 128]],
  grey: [[128, 128, 128]],
  cyan: [[40, 200, 220]],
  teal: [[30, 140, 140]],
  navy: [[20, 30, 100]],
  gold: [[212, 175, 55]],
  silver: [[190, 195, 200]],
  sunset: [
    [250, 120, 60],
    [230, 70, 110],
    [110, 60, 150],
  ],
  ocean: [
    [20, 80, 160],
    [30, 150, 180],
  ],
  sea: [
    [20, 90, 170],
    [40, 160, 190],
  ],
  sky: [
    [120, 180, 240],
    [230, 240, 250],
  ],
  forest: [
    [30, 90, 40],
    [70, 130, 50],
    [100, 70, 40],
  ],
  grass: [[80, 160, 60]],
  night: [
    [15, 20, 50],
    [40, 40, 90],
  ],
  snow: [
    [240, 245, 250],
    [200, 215, 235],
  ],
  fire: [
    [240, 80, 20],
    [250, 180, 40],
  ],
  desert: [
    [220, 180, 120],
    [190, 140, 90],
  ],
};

function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}]+/u)
    .filter(Boolean);
}

const key = (c: Rgb) => c.join(",");

/** `size` colours for the prompt; `avoid` (negative prompt words) removes colours it names. */
export function paletteFor(prompt: string, avoid: string, rand: Random, size = 5): Rgb[] {
  const banned = new Set(wordsOf(avoid).flatMap((w) => (WORD_COLOURS[w] ?? []).map(key)));
  const out: Rgb[] = [];
  for (const w of wordsOf(prompt)) {
    for (const c of WORD_COLOURS[w] ?? []) {
      if (out.length < size && !banned.has(key(c)) && !out.some((o) => key(o) === key(c))) out.push(c);
    }
  }
  while (out.length < size) {
    const c = hsl(rand() * 360, 0.45 + rand() * 0.45, 0.3 + rand() * 0.45);
    if (!banned.has(key(c))) out.push(c);
  }
  return out;
}

/** Moves a colour toward its own grey by `1 - amount` (amount 1 keeps it). */
export function saturate(c: Rgb, amount: number): Rgb {
  const grey = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
  const f = (v: number) => Math.round(Math.min(255, Math.max(0, grey + (v - grey) * amount)));
  return [f(c[0]), f(c[1]), f(c[2])];
}

export function hsl(h: number, s: number, l: number): Rgb {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

export function css(c: Rgb): string {
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}
