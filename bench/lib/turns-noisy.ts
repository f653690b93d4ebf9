// The noisy set of the turn-taking benchmark: callers of its own (turns-noisy-phrases.ts) laid
// out as the quiet sets are, each call with the room of `--noise` under it from its first frame
// to its last, at the stated distances below the caller's own speech level.
import { gain } from "./turns-audio.ts";
import { activeLevelDb, type BackgroundLayer, underCaller } from "./turns-backgrounds.ts";
import { buildSet, espeakSynth, type TurnCase } from "./turns-cases.ts";
import { buildFliteCases } from "./turns-flite.ts";
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
import { softerOverReply } from "./turns-softer.ts";

/**
 * `gainDb` plays each whole call that much louder or quieter on the line, caller and room alike (a
 * quiet handset, a hot one): the gate and the detector should judge it as the same call. `draw`
 * other than 0 draws the set anew from other seeds: the same phrases and voices, at other offsets
 * and gains, with coughs and stretches of the room it has not played (a set the settings were not
 * tuned on); 0 is the set the figures are quoted on.
 */
export function buildNoisyCases(
  layers: readonly BackgroundLayer[],
  gainDb = 0,
  draw = 0,
  softerDb = 0,
): TurnCase[] {
  const shift = draw * 1000;
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
    seed: 20261205 + draw,
    coughSeed: 7300 + shift,
    noiseSeed: 9500 + shift,
    noNoiseBeds: true,
  });
  return underRoom(cases, layers, gainDb, 9700 + shift, softerDb);
}

/**
 * The held-out flite set (turns-flite.ts) under the same rooms: how the gate does on voices and
 * phrases it was never tuned on. A check only: nothing is to be tuned on it.
 */
export function buildFliteNoisyCases(
  layers: readonly BackgroundLayer[],
  gainDb = 0,
  softerDb = 0,
): TurnCase[] {
  return underRoom(buildFliteCases(true), layers, gainDb, 9900, softerDb);
}

/**
 * `cases` with the room of `layers` under each caller (from seed `seed` on), at their speech level
 * less each layer's dB, played `gainDb` louder; `softerDb`: callers speak over the agent's reply
 * that much softer (turns-softer.ts), the room staying where it was against their question.
 */
export function underRoom(
  cases: TurnCase[],
  layers: readonly BackgroundLayer[],
  gainDb: number,
  seed: number,
  softerDb: number,
) {
  return cases.map((c, i) => {
    const { pcm, loudestDbfs } = underCaller(
      softerOverReply(c, softerDb),
      activeLevelDb(c.caller),
      layers,
      c.maxSeconds * 1000,
      seed + i,
    );
    const line = gainDb === 0 ? pcm : gain(pcm, gainDb);
    return { ...c, caller: line, noiseDbfs: Math.round(loudestDbfs + gainDb) };
  });
}
