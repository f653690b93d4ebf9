// E6 audio input: the Base64 payload in its declared format, to mono 16-bit PCM at the recognizer's
// rate. wav and pcm are decoded in-process; ogg and mp3 through ffmpeg.
import { stereoToMono } from "../../../codecs/pcm.ts";
import { resample } from "../../../codecs/resample.ts";
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
