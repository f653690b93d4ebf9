// E6 audio input: the Base64 payload in its declared format, to mono 16-bit PCM at the recognizer's
// rate. wav and pcm are decoded in-process; ogg and mp3 through ffmpeg.
import { stereoToMono } from "../../../codecs/pcm.ts";
import { Resampler, resample } from "../../../codecs/resample.ts";
import { parseWav } from "../../../codecs/wav.ts";
import { ffmpegDecode } from "./ffmpeg.ts";

export interface PcmFormat {
  rate: number;
  bits: number;
  channel: number;
}

/** Channels of interleaved Int16 down to mono (average). */
function toMono(samples: Int16Array, channels: number): Int16Array {
  if (channels === 1) return samples;
  if (channels === 2) return stereoToMono(samples.subarray(0, samples.length - (samples.length % 2)));
  const n = Math.floor(samples.length / channels);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let c = 0; c < channels; c++) s += samples[i * channels + c]!;
    out[i] = Math.round(s / channels);
  }
  return out;
}

function int16Of(bytes: Uint8Array): Int16Array {
  const n = bytes.length >> 1;
  const out = new Int16Array(n);
  new Uint8Array(out.buffer).set(bytes.subarray(0, n * 2));
  return out;
}

export class AudioInputError extends Error {
  override name = "AudioInputError";
}

export async function decodeAsrAudio(
  bytes: Uint8Array,
  type: "wav" | "pcm" | "ogg" | "mp3",
  pcm: PcmFormat | undefined,
  rate: number,
): Promise<Int16Array> {
  switch (type) {
    case "pcm": {
      const f = pcm!;
      return resample(toMono(int16Of(bytes), f.channel), f.rate, rate);
    }
    case "wav": {
      let wav: ReturnType<typeof parseWav>;
      try {
        wav = parseWav(bytes);
      } catch (err) {
        throw new AudioInputError(`audio.data is not a readable WAV file: ${(err as Error).message}`);
      }
      return resample(toMono(wav.samples, wav.channels), wav.sampleRate, rate);
    }
    default:
      try {
        return await ffmpegDecode(bytes, rate);
      } catch (err) {
        throw new AudioInputError(`audio.data is not readable ${type} audio: ${(err as Error).message}`);
      }
  }
}

/**
 * Raw pcm audio as it arrives in byte chunks of any size, to mono 16-bit PCM at `rate`: what
 * decodeAsrAudio gives for the whole of it, piece by piece (the resampler keeps its state).
 */
export class PcmChunkDecoder {
  readonly #format: PcmFormat;
  readonly #resampler: Resampler | undefined;
  #carry = Buffer.alloc(0);

  constructor(format: PcmFormat, rate: number) {
    this.#format = format;
    if (format.rate !== rate) this.#resampler = new Resampler(format.rate, rate);
  }

  /** Samples of the whole frames in `bytes` (and any carried over); a partial frame waits. */
  push(bytes: Uint8Array): Int16Array {
    const all = this.#carry.length
      ? Buffer.concat([this.#carry, bytes])
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const frameBytes = 2 * this.#format.channel;
    const whole = all.length - (all.length % frameBytes);
    this.#carry = Buffer.from(all.subarray(whole));
    const mono = toMono(int16Of(all.subarray(0, whole)), this.#format.channel);
    return this.#resampler ? this.#resampler.push(mono) : mono;
  }

  /** The resampler's tail, at the end of the audio. */
  flush(): Int16Array {
    return this.#resampler ? this.#resampler.flush() : new Int16Array(0);
  }
}
