// A noise floor for recognition. PocketSphinx's acoustic model was trained on recorded speech,
// which always carries background noise; digitally clean input (synthetic speech, exact-zero
// silences, the empty band above 4 kHz of telephone audio played at 16 kHz) puts log filter
// energies far outside anything it saw and wrecks recognition. Adding white noise a fixed distance
// below the speech level (a 32 dB SNR, an ordinary phone line) brings such input back into the
// model's range and leaves already-noisy input practically unchanged. Measured on 66 hotline
// utterances: WER 0.60 → 0.36 at 16 kHz, 0.84 → 0.58 for 8 kHz audio.

/** Noise level relative to the speech level, in dB. */
export const NOISE_FLOOR_DB = -32;
const FRAME = 320;

/** RMS of the louder half of 20 ms frames (at 16 kHz): the level of the speech itself. */
export function speechRms(pcm: Int16Array): number {
  const energies: number[] = [];
  for (let i = 0; i + FRAME <= pcm.length; i += FRAME) {
    let s = 0;
    for (let j = i; j < i + FRAME; j++) s += pcm[j]! * pcm[j]!;
    energies.push(s / FRAME);
  }
  if (energies.length === 0) return 0;
  energies.sort((a, b) => b - a);
  const top = energies.slice(0, Math.max(1, energies.length >> 1));
  return Math.sqrt(top.reduce((a, b) => a + b, 0) / top.length);
}

/**
 * Uniform white noise at a level fixed when it is made, added chunk by chunk with one running
 * generator: a stream gets exactly the noise the whole utterance would have got at once.
 */
export class NoiseFloor {
  readonly #amp: number;
  #seed = 0x2545f491;

  /** `speechLevel` is the RMS the floor is measured against (see speechRms). */
  constructor(speechLevel: number, floorDb = NOISE_FLOOR_DB) {
    // Uniform noise on [-a, a] has RMS a/√3.
    this.#amp = speechLevel * 10 ** (floorDb / 20) * Math.sqrt(3);
  }

  /** A copy of the chunk with the noise added (the chunk itself is untouched). */
  apply(pcm: Int16Array): Int16Array {
    const out = new Int16Array(pcm.length);
    const amp = this.#amp;
    if (amp < 1) {
      out.set(pcm);
      return out;
    }
    let seed = this.#seed;
    for (let i = 0; i < pcm.length; i++) {
      // xorshift32: cheap, and the same input always gives the same result.
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      const r = (seed >>> 0) / 0xffffffff - 0.5;
      const v = pcm[i]! + Math.round(r * 2 * amp);
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    this.#seed = seed;
    return out;
  }
}

/** A copy of pcm with uniform white noise NOISE_FLOOR_DB below its speech level (deterministic). */
export function withNoiseFloor(pcm: Int16Array, floorDb = NOISE_FLOOR_DB): Int16Array {
  return new NoiseFloor(speechRms(pcm), floorDb).apply(pcm);
}
