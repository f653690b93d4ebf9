// The voice activity port the session listens to: speech start/end at stream positions.
import type { NearWindow } from "../../codecs/speech-segmenter.ts";

export interface SpeechEvent {
  type: "speech-start" | "speech-end";
  /** Position in the inbound audio stream (ms since the call's first frame). */
  atMs: number;
}

export interface SpeechDetector {
  /** 16 kHz mono frames, in order; events arrive through the callback given at creation. */
  push(pcm16k: Int16Array): void;
  /**
   * Outside speech, sound that may be the caller starting to speak has been heard but not yet
   * reported: speech-start comes only once enough of it has been, ~100–150 ms after its onset.
   */
  onsetPending(): boolean;
  /**
   * Inside speech, how long it has been silent so far, ms (0 while it goes on): speech-end follows
   * once the silence is long enough. Lets recognition start before that (see speaker-listener.ts).
   */
  pausedMs?(): number;
  close(): void;
}

/**
 * Whether the audio [startMs, endMs) stands out as a near voice over a loud room (the caller's
 * gate measures it, caller-voice.ts `near`): the detector may take such a stretch for speech on
 * less evidence (vad-detector.ts VAD_NEAR_THRESHOLD), or, "clear" of the room, on none. Asked
 * with the detector's speech probability for it (0 where the detector has none).
 */
export type { NearWindow };
export type NearVoice = (startMs: number, endMs: number, probability: number) => NearWindow;

export type SpeechDetectorFactory = (
  onEvent: (event: SpeechEvent) => void,
  near?: NearVoice,
) => SpeechDetector;
