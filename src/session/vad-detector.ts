// The session's speech detector on the codecs' Silero VAD: one shared model per process,
// one detector (recurrent state, segmenter) per call.
import { loadSileroModel, VoiceActivityDetector, type VoiceActivityOptions } from "../../codecs/vad.ts";
import type { Logger } from "../core/log.ts";
import type { SpeechDetectorFactory } from "./speech-detector.ts";

export type VadOptions = Omit<VoiceActivityOptions, "onEvent" | "sampleRate">;

/**
 * Caller audio a detector may hold for the model, ms: a live call's frames come in real time, so
 * more than this behind means the machine is starved; the oldest is skipped rather than queued.
 */
export const VAD_MAX_BACKLOG_MS = 2000;

/**
 * How far below the loudest window the line has carried the detector still listens, dB (codecs/vad.ts
 * energyGateBelowLoudestDb). The caller's gate judges a call's levels against each other, so a call
 * 15 dB quieter on the line must reach the detector as the same call; a line whose loudest is above
 * −15 dBFS keeps the fixed −55 dBFS gate.
 */
export const VAD_GATE_BELOW_LOUDEST_DB = 40;

/**
 * The detector's threshold for a window the caller's gate says stands out as a near voice over a
 * loud room (codecs/speech-segmenter.ts nearThreshold; 0.5 elsewhere). Silero scored a caller
 * 10 dB over a café 0.3–0.44 and never called their question speech; 0.35 for every window
 * took more coughs and room sounds for speech, where the gate's level bar keeps them out.
 */
export const VAD_NEAR_THRESHOLD = 0.3;

export async function sileroDetectorFactory(
  options: VadOptions = {},
  log?: Logger,
): Promise<SpeechDetectorFactory> {
  const model = await loadSileroModel();
  let warned = Number.NEGATIVE_INFINITY;
  return (onEvent, near) => {
    const vad = new VoiceActivityDetector(model, {
      maxBacklogMs: VAD_MAX_BACKLOG_MS,
      energyGateBelowLoudestDb: VAD_GATE_BELOW_LOUDEST_DB,
      nearThreshold: VAD_NEAR_THRESHOLD,
      ...(near ? { near } : {}),
      ...options,
      onSkip: (ms) => {
        options.onSkip?.(ms);
        const now = performance.now();
        if (now - warned < 10_000) return;
        warned = now;
        log?.warn(
          { skippedMs: ms },
          "VAD: more caller audio waiting for the model than it may hold; skipping the oldest",
        );
      },
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
      pausedMs: () => (closed ? 0 : vad.pausedMs),
      close() {
        closed = true;
        vad.reset();
      },
    };
  };
}
