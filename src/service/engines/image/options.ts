// Settings of the E7/E8 endpoints a deployment (or a test) may change.
import type { ImageEngine } from "./engine.ts";

export interface ImageServiceOptions {
  /** Words and phrases whose presence in a prompt gives `content_filtered`; default DEFAULT_IMAGE_BLOCKLIST. */
  blocklist?: readonly string[];
  /** Clock in ms (URL expiry and `created`); default Date.now. Tests move it instead of waiting. */
  now?: () => number;
  /** The engine; default the placeholder. */
  engine?: ImageEngine;
}
