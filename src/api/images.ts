// E7 image generation (JSON) and E8 image edit (multipart form with the image file).
import { type ClientContext, v1 } from "./context.ts";
import { SvcValidationError } from "./errors.ts";
import type { CallOptions } from "./http.ts";
import { imageDimensions } from "./image-size.ts";
import type { ImageEditFields, ImageGenerationRequest, ImageResult } from "./types/images.ts";
import { IMAGE_EDIT_FILE_FIELD } from "./types/images.ts";
import { LIMITS } from "./types/limits.ts";
import { PATHS } from "./types/paths.ts";
import { validateFileSize, validateImageEdit, validateImageGeneration } from "./validate.ts";

export interface ImageEditParams extends ImageEditFields {
  /** The image: bytes, a Blob, or a Base64 string (plain or data URL), which is sent as a form field. */
  image: Uint8Array | Blob | string;
  /** File name of the upload part; default `image.png`. */
  filename?: string;
  /** Content type of the upload part; default from the file name's extension. */
  mimeType?: string;
}

const MIME: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
};

function checkResolution(bytes: Uint8Array): void {
  const d = imageDimensions(bytes);
  const max = LIMITS.imageMaxResolution;
  if (d && (d.width > max || d.height > max))
    throw new SvcValidationError("image", `at most ${max}x${max} pixels`, `${d.width}x${d.height}`);
}

export class ImagesApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** E7: one image from a prompt. */
  async generate(req: ImageGenerationRequest, opts: CallOptions = {}): Promise<ImageResult> {
    validateImageGeneration(req);
    const ex = await this.ctx.http.send(
      { method: "POST", path: v1(PATHS.imageGenerations), json: req },
      opts,
    );
    return ex.json<ImageResult>();
  }

  /** E8: edit one input image from a prompt (multipart upload). */
  async edit(params: ImageEditParams, opts: CallOptions = {}): Promise<ImageResult> {
    const { image, filename = "image.png", mimeType, ...fields } = params;
    validateImageEdit(fields);
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, String(v));
    if (typeof image === "string") {
      form.append(IMAGE_EDIT_FILE_FIELD, image);
    } else {
      const bytes = image instanceof Blob ? new Uint8Array(await image.arrayBuffer()) : image;
      validateFileSize("image", bytes.byteLength);
      checkResolution(bytes);
      const type =
        mimeType ??
        (image instanceof Blob && image.type ? image.type : undefined) ??
        MIME[filename.split(".").pop()?.toLowerCase() ?? ""] ??
        "application/octet-stream";
      form.append(IMAGE_EDIT_FILE_FIELD, new Blob([bytes as Uint8Array<ArrayBuffer>], { type }), filename);
    }
    const ex = await this.ctx.http.send({ method: "POST", path: v1(PATHS.imageEdits), form }, opts);
    return ex.json<ImageResult>();
  }
}
