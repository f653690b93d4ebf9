// The input of E8: a multipart form with one `image` part (a file, or a Base64 text field, plain
// or a data URL) and the other fields as text; or a JSON body with `image` in Base64. The image
// must be one still picture in png, jpeg, webp or gif, at most 4096x4096 pixels.
import type { FastifyRequest } from "fastify";
import sharp, { type Metadata } from "sharp";
import { IMAGE_EDIT_FILE_FIELD } from "../../api/types/images.ts";
import { LIMITS } from "../../api/types/limits.ts";
import { type ApiError, badParam, missingParam, tooLarge } from "../errors.ts";

/** The largest encoded image accepted (as for E9 uploads). */
export const EDIT_IMAGE_MAX_BYTES = LIMITS.fileMaxBytes;
const FORMATS = ["png", "jpeg", "webp", "gif"];

export interface EditInput {
  fields: Record<string, unknown>;
  image: Buffer;
  width: number;
  height: number;
}

/**
 * The image part's name: `image`, or `image[]` as the official SDKs (openai Node and Python) name
 * each part when the image is given as a list (of one image, here).
 */
const isImageField = (name: string) =>
  name === IMAGE_EDIT_FILE_FIELD || name === `${IMAGE_EDIT_FILE_FIELD}[]`;

function oneImage(): ApiError {
  return badParam(IMAGE_EDIT_FILE_FIELD, "one image only: send a single image part (a file or Base64)");
}

function decodeBase64(v: string): Buffer {
  const m = /^data:([^;,]*)(;base64)?,/i.exec(v);
  if (m && !m[2])
    throw badParam(IMAGE_EDIT_FILE_FIELD, "a data URL must be Base64 (data:image/png;base64,…)");
  const body = (m ? v.slice(m[0].length) : v).replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(body)) {
    throw badParam(IMAGE_EDIT_FILE_FIELD, "is neither an image file part nor valid Base64");
  }
  return Buffer.from(body, "base64");
}

async function readParts(
  request: FastifyRequest,
): Promise<{ fields: Record<string, unknown>; image?: Buffer }> {
  const fields: Record<string, unknown> = {};
  let image: Buffer | undefined;
  let failure: unknown;
  for await (const part of request.parts()) {
    if (part.type === "file") {
      if (failure !== undefined || !isImageField(part.fieldname)) {
        part.file.resume();
        continue;
      }
      const bytes = await part.toBuffer().catch((err: unknown) => {
        failure = err;
        return undefined;
      });
      if (failure !== undefined) continue;
      if (part.file.truncated)
        failure = tooLarge(`image too large: at most ${EDIT_IMAGE_MAX_BYTES} bytes`, "image");
      else if (image) failure = oneImage();
      else image = bytes;
    } else if (isImageField(part.fieldname)) {
      if (part.valueTruncated)
        failure ??= tooLarge(`image too large: at most ${EDIT_IMAGE_MAX_BYTES} bytes`, "image");
      else if (image) failure ??= oneImage();
      else if (typeof part.value === "string") image = decodeBase64(part.value);
    } else {
      fields[part.fieldname] = part.value;
    }
  }
  if (failure !== undefined) throw failure;
  return image ? { fields, image } : { fields };
}

/** Reads and checks the request of E8; throws 400 / 413 naming `image` or the field at fault. */
export async function readEditInput(request: FastifyRequest): Promise<EditInput> {
  let fields: Record<string, unknown>;
  let image: Buffer | undefined;
  if (request.isMultipart()) {
    ({ fields, image } = await readParts(request));
  } else {
    const body = request.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw badParam(
        "body",
        "send multipart/form-data (image file + fields) or a JSON object with a Base64 image",
      );
    }
    fields = { ...(body as Record<string, unknown>) };
    const v = fields[IMAGE_EDIT_FILE_FIELD];
    delete fields[IMAGE_EDIT_FILE_FIELD];
    if (Array.isArray(v)) throw oneImage();
    if (v !== undefined && v !== null && v !== "") {
      if (typeof v !== "string")
        throw badParam(IMAGE_EDIT_FILE_FIELD, "must be a Base64 string in a JSON body");
      image = decodeBase64(v);
    }
  }
  if (!image || image.length === 0) {
    throw missingParam(
      IMAGE_EDIT_FILE_FIELD,
      "one image (png, jpeg, webp or gif) as a file part or in Base64",
    );
  }
  let meta: Metadata;
  try {
    meta = await sharp(image, { limitInputPixels: false }).metadata();
  } catch {
    throw badParam(
      IMAGE_EDIT_FILE_FIELD,
      "is not an image (png, jpeg, webp or gif expected)",
      "invalid_image",
    );
  }
  if (!meta.format || !FORMATS.includes(meta.format)) {
    throw badParam(
      IMAGE_EDIT_FILE_FIELD,
      `unsupported image format ${meta.format ?? "unknown"}; png, jpeg, webp or gif expected`,
      "invalid_image",
    );
  }
  if ((meta.pages ?? 1) > 1)
    throw badParam(IMAGE_EDIT_FILE_FIELD, "one still image only (an animated image has several frames)");
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  const max = LIMITS.imageMaxResolution;
  if (width > max || height > max) {
    throw badParam(
      IMAGE_EDIT_FILE_FIELD,
      `at most ${max}x${max} pixels (got ${width}x${height})`,
      "image_too_large",
    );
  }
  // A header can lie: decoding must succeed too, before the engine gets the bytes.
  await sharp(image)
    .stats()
    .catch(() => {
      throw badParam(
        IMAGE_EDIT_FILE_FIELD,
        "the image data is damaged and cannot be decoded",
        "invalid_image",
      );
    });
  return { fields, image, width, height };
}
