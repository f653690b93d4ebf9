// The session's speech detector on the codecs' Silero VAD: one shared model per process,
// one detector (recurrent state, segmenter) per call.
import { loadSileroModel, VoiceActivityDetector, type VoiceActivityOptions } from "../../codecs/vad.ts";
import type { Logger } from "../log.ts";
import type { SpeechDetectorFactory } from "./speech-detector.ts";

export type VadOptions = Omit<VoiceActivityOptions, "onEvent" | "sampleRate">;

export async function sileroDetectorFactory(
  options: VadOptions = {},
  log?: Logger,
): Promise<SpeechDetectorFactory> {
  const model = await loadSileroModel();
  return (onEvent) => {
    const vad = new VoiceActivityDetector(model, {
      ...options,
      sampleRate: 16000,
      onEvent: (e) => onEvent({ type: e.type, atMs: e.atMs }),
      onError: (err) => log?.error({ err: err.message }, "VAD failed on a window"),
    });
    let closed = false;
    return {
      push(pcm16k) {
        // write(), not push(): no promise or result per frame (most windows are decided at once).
        if (!closed) vad.write(pcm16k);
      },
      onsetPending: () => !closed && vad.onsetPending,
      close() {
        closed = true;
        vad.reset();
      },
    };
  };
}
