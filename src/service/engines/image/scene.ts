// The procedural picture of the placeholder engine as SVG (rasterized by sharp/librsvg): a
// gradient ground and layered translucent shapes in the prompt's palette, all drawn from a
// generator seeded by prompt and seed. `steps` adds finer shapes (more "denoising", more detail),
// `cfg_scale` saturates the palette (stronger prompt adherence); the negative prompt counts only
// above cfg_scale 1, as the spec says of the model.
import type { ImageGenerationInput } from "./engine.ts";
import { css, paletteFor, saturate } from "./palette.ts";
import { type Random, randInt, seededRandom } from "./prng.ts";

type SceneInput = Omit<ImageGenerationInput, "textMode">;

const n1 = (v: number) => v.toFixed(1);

function shape(rand: Random, w: number, h: number, size: number, fill: string): string {
  const x = rand() * w;
  const y = rand() * h;
  const opacity = (0.35 + rand() * 0.45).toFixed(2);
  const turn = n1(rand() * 180);
  switch (randInt(rand, 0, 3)) {
    case 0:
      return `<circle cx="${n1(x)}" cy="${n1(y)}" r="${n1(size)}" fill="${fill}" fill-opacity="${opacity}"/>`;
    case 1:
      return `<ellipse cx="${n1(x)}" cy="${n1(y)}" rx="${n1(size)}" ry="${n1(size * (0.3 + rand() * 0.5))}" transform="rotate(${turn} ${n1(x)} ${n1(y)})" fill="${fill}" fill-opacity="${opacity}"/>`;
    case 2: {
      const sw = size * (0.8 + rand());
      const sh = size * (0.4 + rand());
      return `<rect x="${n1(x - sw / 2)}" y="${n1(y - sh / 2)}" width="${n1(sw)}" height="${n1(sh)}" transform="rotate(${turn} ${n1(x)} ${n1(y)})" fill="${fill}" fill-opacity="${opacity}"/>`;
    }
    default: {
      const pts = [0, 1, 2].map((k) => {
        const a = rand() * Math.PI * 2 + (k * Math.PI * 2) / 3;
        return `${n1(x + Math.cos(a) * size)},${n1(y + Math.sin(a) * size)}`;
      });
      return `<polygon points="${pts.join(" ")}" fill="${fill}" fill-opacity="${opacity}"/>`;
    }
  }
}

export function sceneSvg(input: SceneInput): string {
  const { width: w, height: h } = input;
  const negative = input.cfgScale > 1 ? input.negativePrompt : "";
  const rand = seededRandom(
    "scene",
    input.prompt,
    negative,
    input.seed,
    input.steps,
    Math.round(input.cfgScale * 100),
  );
  const strength = Math.min(1, 0.55 + 0.05 * input.cfgScale);
  const palette = paletteFor(input.prompt, negative, rand).map((c) => css(saturate(c, strength)));
  const pick = () => palette[randInt(rand, 0, palette.length - 1)]!;
  const angle = rand() * Math.PI * 2;
  const gx = n1(50 + Math.cos(angle) * 50);
  const gy = n1(50 + Math.sin(angle) * 50);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">`,
    `<defs><linearGradient id="g" x1="${n1(100 - Number(gx))}%" y1="${n1(100 - Number(gy))}%" x2="${gx}%" y2="${gy}%">`,
    `<stop offset="0" stop-color="${palette[0]}"/><stop offset="1" stop-color="${palette[1]}"/></linearGradient></defs>`,
    `<rect width="${w}" height="${h}" fill="url(#g)"/>`,
  ];
  const count = 4 + 2 * input.steps;
  const big = Math.max(w, h);
  for (let i = 0; i < count; i++) {
    // Large forms first, finer ones as the "steps" go on.
    const size = big * (0.3 * (1 - i / count) + 0.02) * (0.6 + 0.8 * rand());
    parts.push(shape(rand, w, h, size, pick()));
  }
  parts.push("</svg>");
  return parts.join("");
}
