// Validation of the E7/E8 parameters, the same rules for both: a JSON body gives typed values, an
// E8 form gives strings (numbers in decimal, booleans as true/false). Every problem is a 400
// naming the parameter and the allowed values.
import { randomInt } from "node:crypto";
import {
  IMAGE_DEFAULT_SIZE,
  IMAGE_MODELS,
  IMAGE_RESPONSE_FORMATS,
  IMAGE_SIZES,
  type ImageResponseFormat,
} from "../../api/types/images.ts";
import { LIMITS } from "../../api/types/limits.ts";
import { badParam, missingParam } from "../errors.ts";

export interface ImageParams {
  prompt: string;
  negativePrompt: string;
  seed: number;
  steps: number;
  cfgScale: number;
  textMode: boolean;
  responseFormat: ImageResponseFormat;
}

/** Where the values come from: typed JSON, or strings of a multipart form. */
export type ParamSource = "json" | "form";

type Fields = Record<string, unknown>;

function number(f: Fields, name: string, src: ParamSource, integer: boolean): number | undefined {
  const v = f[name];
  if (v === undefined || v === null) return undefined;
  const kind = integer ? "an integer" : "a number";
  if (src === "form" && typeof v === "string") {
    const ok = integer ? /^-?\d+$/.test(v.trim()) : /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(v.trim());
    if (!ok) throw badParam(name, `must be ${kind} (got ${JSON.stringify(v)})`);
    return Number(v);
  }
  if (typeof v !== "number" || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw badParam(name, `must be ${kind} (got ${JSON.stringify(v)})`);
  }
  return v;
}

function inRange(name: string, v: number, r: { min: number; max: number }, integer: boolean): number {
  if (v < r.min || v > r.max) {
    throw badParam(
      name,
      `must be ${integer ? "an integer" : "a number"} from ${r.min} to ${r.max} (got ${v})`,
    );
  }
  return v;
}

function text(f: Fields, name: string, required: boolean): string {
  const v = f[name];
  if (v === undefined || v === null || v === "") {
    if (required) throw missingParam(name, `a text of 1 to ${LIMITS.imagePromptMaxChars} characters`);
    return "";
  }
  if (typeof v !== "string") throw badParam(name, "must be a string");
  const n = [...v].length;
  if (n > LIMITS.imagePromptMaxChars) {
    throw badParam(name, `at most ${LIMITS.imagePromptMaxChars} characters (got ${n})`);
  }
  return v;
}

function bool(f: Fields, name: string, src: ParamSource): boolean {
  const v = f[name];
  if (v === undefined || v === null) return false;
  if (typeof v === "boolean") return v;
  if (src === "form" && (v === "true" || v === "false")) return v === "true";
  throw badParam(name, `must be a boolean (true or false; got ${JSON.stringify(v)})`);
}

/** The fields E7 and E8 share. A missing seed is drawn at random (and returned in the result). */
export function parseImageParams(f: Fields, src: ParamSource): ImageParams {
  const model = f.model;
  if (model === undefined || model === null || model === "")
    throw missingParam("model", IMAGE_MODELS.join(", "));
  if (typeof model !== "string" || !(IMAGE_MODELS as readonly string[]).includes(model)) {
    throw badParam("model", `unknown model ${JSON.stringify(model)}; use ${IMAGE_MODELS.join(", ")}`);
  }
  const prompt = text(f, "prompt", true);
  const negativePrompt = text(f, "negative_prompt", false);
  const seedIn = number(f, "seed", src, true);
  const seed =
    seedIn === undefined ? randomInt(0, LIMITS.seed.max + 1) : inRange("seed", seedIn, LIMITS.seed, true);
  const steps = inRange("steps", number(f, "steps", src, true) ?? LIMITS.steps.default, LIMITS.steps, true);
  const cfgScale = inRange(
    "cfg_scale",
    number(f, "cfg_scale", src, false) ?? LIMITS.cfgScale.default,
    LIMITS.cfgScale,
    false,
  );
  const rf = f.response_format ?? "url";
  if (!(IMAGE_RESPONSE_FORMATS as readonly unknown[]).includes(rf)) {
    throw badParam(
      "response_format",
      `must be one of ${IMAGE_RESPONSE_FORMATS.join(", ")} (got ${JSON.stringify(rf)})`,
    );
  }
  return {
    prompt,
    negativePrompt,
    seed,
    steps,
    cfgScale,
    textMode: bool(f, "text_mode", src),
    responseFormat: rf as ImageResponseFormat,
  };
}

/** E7 `size`, written height x width. */
export function parseGenerationSize(v: unknown): { width: number; height: number } {
  const size = v ?? IMAGE_DEFAULT_SIZE;
  if (!(IMAGE_SIZES as readonly unknown[]).includes(size)) {
    throw badParam(
      "size",
      `must be one of ${IMAGE_SIZES.join(", ")} (height x width; got ${JSON.stringify(size)})`,
    );
  }
  const [height, width] = (size as string).split("x").map(Number) as [number, number];
  return { width, height };
}

/** E7 `n`: one image per request. */
export function checkN(v: unknown): void {
  if (v === undefined || v === null || v === LIMITS.imagesPerRequest) return;
  throw badParam(
    "n",
    `only ${LIMITS.imagesPerRequest} image per request is supported (got ${JSON.stringify(v)})`,
  );
}
