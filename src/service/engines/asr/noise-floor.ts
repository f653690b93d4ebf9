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

/** A copy of pcm with uniform white noise NOISE_FLOOR_DB below its speech level (deterministic). */
export function withNoiseFloor(pcm: Int16Array, floorDb = NOISE_FLOOR_DB): Int16Array {
  // Uniform noise on [-a, a] has RMS a/√3.
  const amp = speechRms(pcm) * 10 ** (floorDb / 20) * Math.sqrt(3);
  const out = new Int16Array(pcm.length);
  if (amp < 1) {
    out.set(pcm);
    return out;
  }
  let seed = 0x2545f491;
  for (let i = 0; i < pcm.length; i++) {
    // xorshift32: cheap, and the same input always gives the same result.
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    const r = (seed >>> 0) / 0xffffffff - 0.5;
    const v = pcm[i]! + Math.round(r * 2 * amp);
    out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
  }
  return out;
}
