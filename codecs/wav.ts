// RIFF/WAVE: writing 16-bit PCM files and streaming headers, reading what common tools write.
//
// Reading is lenient where real files are sloppy and strict where guessing would be wrong:
// unknown chunks (LIST, fact, junk, …) are skipped with their odd-size pad byte; a data size
// of 0xFFFFFFFF (ffmpeg writing to a pipe, our own streaming header) or one running past the
// end (sox writing to a pipe, a cut-off stream) means "to the end of the bytes"; a trailing
// partial sample frame is dropped. Formats other than integer PCM 8/16/24/32, float 32/64,
// µ-law and A-law are refused with an error naming the format.
//
// Byte order: WAV is little-endian; the fast paths copy Int16Array bytes as they are, which is
// right on every little-endian host (all platforms Node supports in practice).

import { alawDecode, mulawDecode } from "./g711.ts";

export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  format: "pcm" | "float" | "mulaw" | "alaw";
  /** Byte offset of the first sample in the file. */
  dataOffset: number;
  /** Bytes of sample data actually present (whole frames only). */
  dataBytes: number;
}

/** Value of the RIFF and data size fields in a streaming header: "unknown, read to the end". */
export const UNKNOWN_SIZE = 0xffffffff;

const FORMAT_TAGS: Record<number, WavInfo["format"]> = { 1: "pcm", 3: "float", 6: "alaw", 7: "mulaw" };
const FORMAT_NAMES: Record<number, string> = { 2: "Microsoft ADPCM", 17: "IMA ADPCM", 85: "MPEG Layer 3" };
const EXTENSIBLE = 0xfffe;

function fourcc(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at]!, bytes[at + 1]!, bytes[at + 2]!, bytes[at + 3]!);
}

function writeAscii(view: DataView, at: number, text: string): void {
  for (let i = 0; i < text.length; i++) view.setUint8(at + i, text.charCodeAt(i));
}

/**
 * 44-byte canonical header for integer PCM. Without `dataBytes` it is a streaming header: the
 * RIFF and data sizes are 0xFFFFFFFF, sent once before an open-ended stream of samples.
 */
export function wavHeader(
  sampleRate: number,
  channels: number,
  bitsPerSample: number,
  dataBytes?: number,
): Uint8Array {
  if (![8, 16, 24, 32].includes(bitsPerSample)) {
    throw new RangeError(
      `wavHeader: integer PCM needs 8, 16, 24 or 32 bits per sample, got ${bitsPerSample}`,
    );
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 65535) {
    throw new RangeError(`wavHeader: channels must be an integer 1…65535, got ${channels}`);
  }
  if (!Number.isInteger(sampleRate) || sampleRate < 1) {
    throw new RangeError(`wavHeader: sample rate must be a positive integer, got ${sampleRate}`);
  }
  if (
    dataBytes !== undefined &&
    (!Number.isInteger(dataBytes) || dataBytes < 0 || dataBytes > 0xffffffff - 36)
  ) {
    throw new RangeError(`wavHeader: data size ${dataBytes} does not fit a WAV file (max 4 GiB)`);
  }
  const header = new Uint8Array(44);
  const v = new DataView(header.buffer);
  const blockAlign = (channels * bitsPerSample) / 8;
  const riffSize = dataBytes === undefined ? UNKNOWN_SIZE : 36 + dataBytes + (dataBytes % 2);
  writeAscii(v, 0, "RIFF");
  v.setUint32(4, riffSize, true);
  writeAscii(v, 8, "WAVE");
  writeAscii(v, 12, "fmt ");
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, channels, true);
  v.setUint32(24, sampleRate, true);
  v.setUint32(28, sampleRate * blockAlign, true);
  v.setUint16(32, blockAlign, true);
  v.setUint16(34, bitsPerSample, true);
  writeAscii(v, 36, "data");
  v.setUint32(40, dataBytes ?? UNKNOWN_SIZE, true);
  return header;
}

/** A complete 16-bit PCM WAV file; `pcm` is interleaved when channels > 1. */
export function encodeWav(pcm: Int16Array, sampleRate: number, channels = 1): Uint8Array {
  if (pcm.length % channels !== 0) {
    throw new RangeError(
      `encodeWav: ${pcm.length} samples is not a whole number of ${channels}-channel frames`,
    );
  }
  const file = new Uint8Array(44 + pcm.byteLength);
  file.set(wavHeader(sampleRate, channels, 16, pcm.byteLength));
  file.set(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength), 44);
  return file;
}

function fail(what: string): never {
  throw new Error(`parseWav: ${what}`);
}

interface Fmt {
  tag: number;
  channels: number;
  sampleRate: number;
  blockAlign: number;
  bitsPerSample: number;
}

function readFmt(bytes: Uint8Array, at: number, size: number): Fmt {
  if (size < 16) fail(`fmt chunk is ${size} bytes, needs at least 16`);
  const v = new DataView(bytes.buffer, bytes.byteOffset + at, size);
  let tag = v.getUint16(0, true);
  if (tag === EXTENSIBLE) {
    // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the SubFormat GUID.
    if (size < 40) fail(`WAVE_FORMAT_EXTENSIBLE fmt chunk is ${size} bytes, needs 40`);
    tag = v.getUint16(24, true);
  }
  return {
    tag,
    channels: v.getUint16(2, true),
    sampleRate: v.getUint32(4, true),
    blockAlign: v.getUint16(12, true),
    bitsPerSample: v.getUint16(14, true),
  };
}

function checkFmt(fmt: Fmt): WavInfo["format"] {
  const format = FORMAT_TAGS[fmt.tag];
  if (!format) {
    const known = FORMAT_NAMES[fmt.tag];
    fail(
      `format tag 0x${fmt.tag.toString(16).padStart(4, "0")}${known ? ` (${known})` : ""} is not supported`,
    );
  }
  const bits = fmt.bitsPerSample;
  const ok =
    format === "pcm"
      ? [8, 16, 24, 32].includes(bits)
      : format === "float"
        ? bits === 32 || bits === 64
        : bits === 8;
  if (!ok) fail(`${bits}-bit ${format} is not supported`);
  if (fmt.channels < 1) fail("fmt chunk says 0 channels");
  if (fmt.sampleRate < 1) fail("fmt chunk says sample rate 0");
  if (fmt.blockAlign !== (fmt.channels * bits) / 8) {
    fail(`block align ${fmt.blockAlign} does not match ${fmt.channels} channels of ${bits} bits`);
  }
  return format;
}

function toInt16(samples: number, read: (i: number) => number): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) {
    const r = Math.round(read(i));
    out[i] = r > 32767 ? 32767 : r < -32768 ? -32768 : r;
  }
  return out;
}

function decode(bytes: Uint8Array, format: WavInfo["format"], bits: number): Int16Array {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / (bits / 8);
  if (format === "mulaw") return mulawDecode(bytes);
  if (format === "alaw") return alawDecode(bytes);
  if (format === "float") {
    return bits === 32
      ? toInt16(n, (i) => v.getFloat32(4 * i, true) * 32768)
      : toInt16(n, (i) => v.getFloat64(8 * i, true) * 32768);
  }
  switch (bits) {
    case 8: // unsigned, 128 is zero
      return toInt16(n, (i) => (bytes[i]! - 128) * 256);
    case 16: {
      const out = new Int16Array(n);
      new Uint8Array(out.buffer).set(bytes);
      return out;
    }
    case 24:
      return toInt16(
        n,
        (i) => ((bytes[3 * i]! | (bytes[3 * i + 1]! << 8) | (bytes[3 * i + 2]! << 16)) << 8) / 65536,
      );
    default:
      return toInt16(n, (i) => v.getInt32(4 * i, true) / 65536);
  }
}

/**
 * Parses a WAV file and decodes its samples to Int16 (interleaved when channels > 1; 24/32-bit
 * and float are rounded to 16 bits, clipping out-of-range floats).
 */
export function parseWav(bytes: Uint8Array): WavInfo & { samples: Int16Array } {
  if (bytes.length < 12) fail(`${bytes.length} bytes is too short for a RIFF header`);
  const riff = fourcc(bytes, 0);
  if (riff === "RF64") fail("RF64 (WAV over 4 GiB) is not supported");
  if (riff !== "RIFF") fail(`not a RIFF file (starts with ${JSON.stringify(riff)})`);
  const wave = fourcc(bytes, 8);
  if (wave !== "WAVE") fail(`RIFF file of type ${JSON.stringify(wave)}, not WAVE`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: Fmt | undefined;
  let at = 12;
  while (at + 8 <= bytes.length) {
    const id = fourcc(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === "fmt ") {
      if (body + size > bytes.length) fail(`fmt chunk runs past the end of the file`);
      fmt = readFmt(bytes, body, size);
    } else if (id === "data") {
      if (!fmt) fail("data chunk comes before any fmt chunk");
      const format = checkFmt(fmt);
      // Unknown or overstated size (streaming writers): take what is there, whole frames only.
      const present = size === UNKNOWN_SIZE ? bytes.length - body : Math.min(size, bytes.length - body);
      const dataBytes = present - (present % fmt.blockAlign);
      return {
        sampleRate: fmt.sampleRate,
        channels: fmt.channels,
        bitsPerSample: fmt.bitsPerSample,
        format,
        dataOffset: body,
        dataBytes,
        samples: decode(bytes.subarray(body, body + dataBytes), format, fmt.bitsPerSample),
      };
    }
    at = body + size + (size % 2);
  }
  fail(fmt ? "no data chunk" : "no fmt chunk");
}
