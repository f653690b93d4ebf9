// The embedded image engine, an honest placeholder for a diffusion model. Generation draws a
// deterministic procedural picture from prompt and seed (same inputs, same PNG bytes) and, with
// text_mode, sets the prompt's words on it. Editing applies the image operations the prompt names
// (operations.ts) and keeps the input's size. Neither understands the prompt beyond those words.
import sharp from "sharp";
import { captionSvg, captionText } from "./caption.ts";
import type { ImageEditInput, ImageEngine, ImageGenerationInput, ImageOutput } from "./engine.ts";
import { done, load, operationsIn, type Raster } from "./operations.ts";
import { sceneSvg } from "./scene.ts";

/** zlib level of the PNGs written: a fair size at a small CPU cost. */
const PNG = { compressionLevel: 6 } as const;

const short = (t: string) => (t.length > 60 ? `${t.slice(0, 57)}...` : t);

export class PlaceholderImageEngine implements ImageEngine {
  readonly name = "placeholder";

  async generate(input: ImageGenerationInput): Promise<ImageOutput> {
    const { width, height } = input;
    let svg = sceneSvg(input);
    const applied = [`procedural scene (${4 + 2 * input.steps} shapes)`];
    if (input.textMode) {
      const text = captionText(input.prompt);
      const caption = captionSvg(text, width, height);
      // The caption is a nested <svg> drawn last, over the scene, in one rasterization.
      if (caption) svg = `${svg.slice(0, -"</svg>".length)}${caption}</svg>`;
      applied.push(`text "${short(text)}"`);
    }
    const png = await sharp(Buffer.from(svg)).resize(width, height).removeAlpha().png(PNG).toBuffer();
    return { png, width, height, applied };
  }

  async edit(input: ImageEditInput): Promise<ImageOutput> {
    let r: Raster = await done(sharp(input.image));
    const { width, height } = r;
    const hadAlpha = r.channels === 4;
    const negative = input.cfgScale > 1 ? input.negativePrompt : "";
    const ops = operationsIn(input.prompt, negative);
    for (const op of ops) r = await op.apply(r);
    if (r.width !== width || r.height !== height) {
      // A rotation by other than 180° changes the canvas: fit it back into the input's size.
      r = await done(
        load(r).resize(width, height, { fit: "contain", background: { r: 0, g: 0, b: 0, alpha: 0 } }),
      );
    }
    const applied = ops.map((o) => o.label);
    const text = input.textMode ? quotedText(input.prompt) : "";
    const caption = captionSvg(text, width, height);
    if (caption) {
      r = await done(load(r).composite([{ input: Buffer.from(caption) }]));
      applied.push(`text "${short(text)}"`);
    }
    let out = load(r);
    if (!hadAlpha && r.channels === 4) out = out.removeAlpha();
    return { png: await out.png(PNG).toBuffer(), width, height, applied };
  }
}

/** An edit's prompt is mostly instructions: only its quoted text is set as text. */
function quotedText(prompt: string): string {
  const t = captionText(prompt);
  return t === prompt.replace(/\s+/g, " ").trim() ? "" : t;
}
