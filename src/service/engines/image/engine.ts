// The image engine seen by the E7/E8 routes. The embedded one is a placeholder (placeholder.ts):
// deterministic procedural pictures and prompt-named image operations, no diffusion model. A real
// model can replace it behind this interface.

export interface ImageGenerationInput {
  prompt: string;
  /** Only honoured when cfgScale is above 1 (as the spec says of the model). */
  negativePrompt: string;
  width: number;
  height: number;
  seed: number;
  steps: number;
  cfgScale: number;
  /** Render the prompt's words (or its quoted text) into the picture. */
  textMode: boolean;
}

export interface ImageEditInput {
  /** The input image's encoded bytes (png, jpeg, webp or gif), already checked to decode. */
  image: Uint8Array;
  prompt: string;
  negativePrompt: string;
  seed: number;
  steps: number;
  cfgScale: number;
  textMode: boolean;
}

export interface ImageOutput {
  /** PNG bytes. */
  png: Buffer;
  width: number;
  height: number;
  /** What the engine did, for the logs (e.g. the operations an edit applied). */
  applied: string[];
}

export interface ImageEngine {
  /** Shown in logs and docs/local-service.md, e.g. `placeholder`. */
  readonly name: string;
  generate(input: ImageGenerationInput): Promise<ImageOutput>;
  edit(input: ImageEditInput): Promise<ImageOutput>;
}
