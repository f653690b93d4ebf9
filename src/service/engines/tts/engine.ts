// The synthesis engine seen by the speech routes: text in, mono 16-bit PCM at the engine's own rate
// out, streamed in chunks while it is produced. A neural engine can replace espeak-ng behind it.
import type { EngineVoice } from "./voices.ts";

export interface SynthesisRequest {
  /** Plain text to speak (instructions, Markdown and pronunciation rules already applied). */
  text: string;
  voice: EngineVoice;
  /** Speaking-rate factor, 0.5 to 2.0. */
  speed: number;
  /** The service's voice id (official or cloned), for engines that map ids to voices of their own. */
  voiceId?: string;
  /** Global guidance on how to speak (svcaudio-2.5-tts's `instruction`), for engines that take it. */
  instruction?: string;
}

export interface TtsEngine {
  /** Rate of the PCM handed to onPcm. */
  readonly sampleRate: number;
  /** Resolves once the whole text has been delivered to onPcm. */
  synthesize(req: SynthesisRequest, onPcm: (pcm: Int16Array) => void, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
  /**
   * True when sentences may be synthesized ahead of the one being played (an upstream server:
   * E5 requests each sentence as soon as it is complete); false/absent: one at a time.
   */
  readonly concurrent?: boolean;
}
