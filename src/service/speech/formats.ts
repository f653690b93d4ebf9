// Audio formats of E4 and E5: whole files (pcm, wav in-process; opus in-process through libopus;
// mp3, flac through ffmpeg) and the per-session delta encoders of E5. Plain formats give deltas that
// each decode on their own; the *_stream formats give one continuous stream across deltas.
import { OggOpusWriter, OpusCodec, type OpusRate } from "../../../codecs/opus.ts";
import { concatPcm } from "../../../codecs/pcm.ts";
import { Resampler } from "../../../codecs/resample.ts";
import { encodeWav } from "../../../codecs/wav.ts";
import { ffmpegEncode } from "./ffmpeg.ts";

export type FileFormat = "pcm" | "wav" | "mp3" | "flac" | "opus";
export type StreamFormat = "mp3_stream" | "opus_stream" | "flac_stream";
export type OutputFormat = FileFormat | StreamFormat;

export const CONTENT_TYPES: Readonly<Record<FileFormat, string>> = {
  pcm: "audio/pcm",
  wav: "audio/wav",
  mp3: "audio/mpeg",
  flac: "audio/flac",
  opus: "audio/ogg; codecs=opus",
};

export const FILE_EXTENSIONS: Readonly<Record<FileFormat, string>> = {
  pcm: "pcm",
  wav: "wav",
  mp3: "mp3",
  flac: "flac",
  opus: "opus",
};

function pcmBytes(pcm: Int16Array): Uint8Array {
  return new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

/** Opus runs at 8/16/24/48 kHz: the lowest of them at or above the requested rate. */
function opusRateFor(rate: number): OpusRate {
  return ([8000, 16000, 24000, 48000] as const).find((r) => r >= rate) ?? 48000;
}

/** Incremental Ogg/Opus encoding of one logical stream (20 ms frames). */
class OpusStreamEncoder {
  private readonly codec: OpusCodec;
  private readonly writer: OggOpusWriter;
  private readonly rs: Resampler | null;
  private readonly frame: Int16Array;
  private fill = 0;

  constructor(rate: number) {
    const opusRate = opusRateFor(rate);
    this.codec = new OpusCodec(opusRate, 1);
    this.writer = new OggOpusWriter({ channels: 1, inputSampleRate: rate, packetsPerPage: 1 });
    this.rs = opusRate === rate ? null : new Resampler(rate, opusRate);
    this.frame = new Int16Array(this.codec.frameSamples);
  }

  /** Encodes whole frames; `pad` completes the last partial frame with silence. */
  push(input: Int16Array, pad: boolean): Uint8Array {
    let pcm = this.rs ? this.rs.push(input) : input;
    if (pad && this.rs) pcm = concatPcm([pcm, this.rs.flush()]);
    const out: Uint8Array[] = [this.writer.headers()];
    let at = 0;
    while (at < pcm.length) {
      const n = Math.min(this.frame.length - this.fill, pcm.length - at);
      this.frame.set(pcm.subarray(at, at + n), this.fill);
      this.fill += n;
      at += n;
      if (this.fill === this.frame.length) {
        out.push(this.writer.write(this.codec.encode(this.frame)));
        this.fill = 0;
      }
    }
    if (pad && this.fill > 0) {
      this.frame.fill(0, this.fill);
      out.push(this.writer.write(this.codec.encode(this.frame)));
      this.fill = 0;
    }
    return concatBytes(out);
  }

  end(): Uint8Array {
    return this.writer.end();
  }
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const nonEmpty = parts.filter((p) => p.length > 0);
  if (nonEmpty.length === 1) return nonEmpty[0]!;
  const out = new Uint8Array(nonEmpty.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of nonEmpty) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A complete file of the format. */
export async function encodeFile(pcm: Int16Array, rate: number, format: FileFormat): Promise<Uint8Array> {
  switch (format) {
    case "pcm":
      return pcmBytes(pcm);
    case "wav":
      return encodeWav(pcm, rate);
    case "opus": {
      const enc = new OpusStreamEncoder(rate);
      return concatBytes([enc.push(pcm, true), enc.end()]);
    }
    default:
      return ffmpegEncode(pcm, rate, format);
  }
}

/** Bytes of a FLAC stream after its "fLaC" marker and metadata blocks: the audio frames. */
export function flacFrames(file: Uint8Array): Uint8Array {
  if (file.length < 4 || String.fromCharCode(...file.subarray(0, 4)) !== "fLaC") return file;
  let at = 4;
  for (;;) {
    if (at + 4 > file.length) return new Uint8Array(0);
    const last = (file[at]! & 0x80) !== 0;
    const len = (file[at + 1]! << 16) | (file[at + 2]! << 8) | file[at + 3]!;
    at += 4 + len;
    if (last) return file.subarray(at);
  }
}

/**
 * E5 encoder of one session. Chunk-level formats (pcm, wav, opus_stream) turn every PCM chunk into
 * a delta at once; the others encode a sentence when it is complete.
 */
export interface DeltaEncoder {
  readonly chunked: boolean;
  /** Chunk-level formats: bytes for a chunk; `last` closes the sentence. */
  chunk(pcm: Int16Array, last: boolean): Uint8Array;
  /** Sentence-level formats: bytes for a whole sentence. */
  sentence(pcm: Int16Array): Promise<Uint8Array>;
  /** All audio of the session in the format (tts.response.audio.done). */
  all(allPcm: Int16Array): Promise<Uint8Array>;
}

export function createDeltaEncoder(format: OutputFormat, rate: number): DeltaEncoder {
  const sent: Uint8Array[] = [];
  const keep = (b: Uint8Array) => {
    if (b.length) sent.push(b);
    return b;
  };
  switch (format) {
    case "pcm":
    case "wav":
      return {
        chunked: true,
        chunk: (pcm) => (format === "pcm" ? pcmBytes(pcm).slice() : encodeWav(pcm, rate)),
        sentence: async () => new Uint8Array(0),
        all: (pcm) => encodeFile(pcm, rate, format),
      };
    case "opus_stream": {
      const enc = new OpusStreamEncoder(rate);
      return {
        chunked: true,
        chunk: (pcm, last) => keep(enc.push(pcm, last)),
        sentence: async () => new Uint8Array(0),
        all: async () => concatBytes([...sent, enc.end()]),
      };
    }
    case "mp3_stream":
      // MPEG audio frames carry their own headers: encodings of consecutive sentences concatenate
      // into one valid stream.
      return {
        chunked: false,
        chunk: () => new Uint8Array(0),
        sentence: async (pcm) => keep(await ffmpegEncode(pcm, rate, "mp3")),
        all: async () => concatBytes(sent),
      };
    case "flac_stream":
      // One "fLaC" header, then the frames of every sentence.
      return {
        chunked: false,
        chunk: () => new Uint8Array(0),
        sentence: async (pcm) => {
          const file = await ffmpegEncode(pcm, rate, "flac");
          return keep(sent.length === 0 ? file : flacFrames(file));
        },
        all: async () => concatBytes(sent),
      };
    default:
      return {
        chunked: false,
        chunk: () => new Uint8Array(0),
        sentence: (pcm) => encodeFile(pcm, rate, format),
        all: (pcm) => encodeFile(pcm, rate, format),
      };
  }
}
