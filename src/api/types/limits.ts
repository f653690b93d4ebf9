// Documented limits (spec "Limits" and the parameter tables), shared by the client's checks
// before sending and the local service's validation.

export interface Range {
  readonly min: number;
  readonly max: number;
  readonly default?: number;
}

export const LIMITS = {
  /** E4 `input`. */
  speechInputMaxChars: 1000,
  /** E5 `tts.text.delta` `text`. */
  ttsDeltaMaxChars: 1000,
  /** E4/E5 `instruction`. */
  instructionMaxChars: 200,
  /** E5: the server completes generation and closes after this much inactivity. */
  ttsIdleMs: 60_000,
  /** E4 `return_url` audio URL validity. */
  audioUrlValiditySeconds: 12 * 3600,
  /** E7/E8 image URL validity. */
  imageUrlValiditySeconds: 2 * 3600,
  /** E7/E8 `prompt` and `negative_prompt`. */
  imagePromptMaxChars: 512,
  /** E8 input image, both sides. */
  imageMaxResolution: 4096,
  /** E7/E8 `n`. */
  imagesPerRequest: 1,
  steps: { min: 1, max: 50, default: 8 },
  cfgScale: { min: 1, max: 10, default: 1 },
  seed: { min: 0, max: 2147483647 },
  /** E9 upload size. */
  fileMaxBytes: 128 * 1024 * 1024,
  filesPerUser: 1000,
  /** E9 audio meant for voice cloning. */
  voiceCloneSeconds: { min: 5, max: 10 },
  /** E1 video parts: size is a limit, duration a recommendation. */
  videoMaxBytes: 128 * 1024 * 1024,
  videoRecommendedMaxSeconds: 300,
  /** E10 `limit`. */
  voicePageSize: { min: 1, max: 100, default: 20 },
  /** E1 `n`: default 1, at most 5 suggested. */
  chatN: { min: 1, max: 5, default: 1 },
  /** E1/E3 `temperature`. */
  temperature: { min: 0, max: 2 },
  /** E1 `frequency_penalty`. */
  frequencyPenalty: { min: 0, max: 1, default: 0 },
  /** E2 `top_k`. */
  topK: { min: 0, max: 500 },
  /** E2 `top_p`: greater than 0 (exclusive), at most 1. */
  messagesTopP: { min: 0, max: 1 },
  /** E4 `speed`, E5 `speed_ratio`. */
  speed: { min: 0.5, max: 2, default: 1 },
  /** E4 `volume`, E5 `volume_ratio`. */
  volume: { min: 0.1, max: 2, default: 1 },
  /** E1 tool names: recommended length bound. */
  toolNameRecommendedMaxChars: 64,
} as const;

/** E1 tool names accept letters, digits, `_` and `-`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]+$/;
