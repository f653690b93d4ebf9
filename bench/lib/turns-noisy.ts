// The noisy set of the turn-taking benchmark: callers of its own (turns-noisy-phrases.ts) laid
// out as the quiet sets are, each call with the room of `--noise` under it from its first frame
// to its last, at the stated distances below the caller's own speech level.
import { activeLevelDb, type BackgroundLayer, underCaller } from "./turns-backgrounds.ts";
import { buildSet, espeakSynth, type TurnCase } from "./turns-cases.ts";
import {
  NOISY_BACKCHANNELS,
  NOISY_COMPLETE,
  NOISY_COUGH_MS,
  NOISY_INTERRUPTIONS,
  NOISY_PAUSED,
  NOISY_PAUSES_MS,
  NOISY_SPEEDS,
  NOISY_VOICES,
} from "./turns-noisy-phrases.ts";

export function buildNoisyCases(layers: readonly BackgroundLayer[]): TurnCase[] {
  const cases = buildSet({
    synth: espeakSynth,
    voices: NOISY_VOICES,
    speeds: NOISY_SPEEDS,
    complete: NOISY_COMPLETE,
    paused: NOISY_PAUSED,
    pausesMs: NOISY_PAUSES_MS,
    backchannels: NOISY_BACKCHANNELS,
    coughMs: NOISY_COUGH_MS,
    interruptions: NOISY_INTERRUPTIONS,
    seed: 20261205,
    coughSeed: 7300,
    noiseSeed: 9500,
    noNoiseBeds: true,
  });
  return cases.map((c, i) => {
    const { pcm, loudestDbfs } = underCaller(
      c.caller,
      activeLevelDb(c.caller),
      layers,
      c.maxSeconds * 1000,
      9700 + i,
    );
    return { ...c, caller: pcm, noiseDbfs: Math.round(loudestDbfs) };
  });
}
