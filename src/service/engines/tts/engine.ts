// The synthesis engine seen by the speech routes: text in, mono 16-bit PCM at the engine's own rate
// out, streamed in chunks while it is produced. A neural engine can replace espeak-ng behind it.
import type { EngineVoice } from "./voices.ts";

export interface SynthesisRequest {
  /** Plain text to speak (instructions, Markdown and pronunciation rules already applied). */
  text: string;
  voice: EngineVoice;
  /** Speaking-rate factor, 0.5 to 2.0. */
  speed: number;
}

export interface TtsEngine {
  /** Rate of the PCM handed to onPcm. */
  readonly sampleRate: number;
  /** Resolves once the whole text has been delivered to onPcm. */
  synthesize(req: SynthesisRequest, onPcm: (pcm: Int16Array) => void): Promise<void>;
  close(): Promise<void>;
}
