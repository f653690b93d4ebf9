// E7 image generation (JSON) and E8 image edit (multipart form), and their shared result.
import type { OpenString } from "./common.ts";

export const IMAGE_MODELS = ["svc-image-edit-2"] as const;
export type ImageModel = OpenString<(typeof IMAGE_MODELS)[number]>;

/** Written height x width. */
export const IMAGE_SIZES = ["1024x1024", "768x1360", "896x1184", "1360x768", "1184x896"] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];
export const IMAGE_DEFAULT_SIZE: ImageSize = "1024x1024";

export const IMAGE_RESPONSE_FORMATS = ["b64_json", "url"] as const;
export type ImageResponseFormat = (typeof IMAGE_RESPONSE_FORMATS)[number];

export const IMAGE_FINISH_REASONS = ["success", "content_filtered"] as const;

interface ImageCommon {
  model: ImageModel;
  /** At most 512 characters. */
  prompt: string;
  /** 0 to 2147483647; random if omitted. */
  seed?: number;
  /** 1 to 50, default 8. */
  steps?: number;
  /** 1.0 to 10.0, default 1.0. */
  cfg_scale?: number;
  /** At most 512 characters; ignored when cfg_scale is 1.0. */
  negative_prompt?: string;
  text_mode?: boolean;
  /** Default `url`. */
  response_format?: ImageResponseFormat;
}

export interface ImageGenerationRequest extends ImageCommon {
  size?: ImageSize;
  /** Only 1. */
  n?: number;
}

/**
 * E8 form fields besides the `image` file part. On the wire every field is a form string; numbers
 * and booleans are sent in decimal / `true`/`false`. `size` is accepted and ignored.
 */
export interface ImageEditFields extends ImageCommon {
  size?: string;
}

/** Name of the E8 form part holding the image file. */
export const IMAGE_EDIT_FILE_FIELD = "image";

export interface ImageData {
  seed: number;
  finish_reason: OpenString<(typeof IMAGE_FINISH_REASONS)[number]>;
  /** With response_format `b64_json`. */
  b64_json?: string;
  /** With response_format `url`; valid 2 hours. */
  url?: string;
}

export interface ImageResult {
  created: number;
  data: ImageData[];
}
