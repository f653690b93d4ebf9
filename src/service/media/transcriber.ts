// The seam between chat engines and speech recognition: an engine that must understand audio parts
// calls a Transcriber, which the ASR engine provides (injected; absent until one is registered).

export interface AudioClip {
  bytes: Buffer;
  /** Container format as sniffed: `wav` or `mp3`. */
  format: string;
  mime: string;
}

export type Transcriber = (audio: AudioClip, opts?: { signal?: AbortSignal }) => Promise<string>;
