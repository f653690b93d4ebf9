// Opus: the Ogg/Opus container (RFC 7845) as a live writer and a streaming reader, and encode/decode
// through the native libopus binding (@discordjs/opus): no process spawn on the call path.

import { createRequire } from "node:module";
import { OGG_NO_GRANULE, OggDemuxer, OggMuxer } from "./ogg.ts";
import {
  buildOpusHead,
  buildOpusTags,
  isOpusHead,
  isOpusTags,
  type OpusHead,
  type OpusTags,
  parseOpusHead,
  parseOpusTags,
} from "./opus-head.ts";
import { opusPacketSamples48k } from "./opus-packet.ts";

export type { OpusHead, OpusTags } from "./opus-head.ts";

/**
 * libopus's encoder delay at 48 kHz for the AUDIO/VOIP applications (2.5 ms lookahead + 4 ms delay
 * compensation), which is what pre-skip must remove from the decoder's output.
 */
export const OPUS_ENCODER_PRESKIP = 312;

export interface OggOpusWriterOptions {
  /** Channels the packets were encoded with (1 or 2). Default 1. */
  channels?: 1 | 2;
  /** 48 kHz samples the player drops at the start. Default OPUS_ENCODER_PRESKIP (libopus's delay). */
  preSkip?: number;
  /** Rate of the audio before encoding (informational). Default 48000. */
  inputSampleRate?: number;
  vendor?: string;
  /** "KEY=value" comments for OpusTags; keep them under 64 KiB so OpusTags fits on one page. */
  comments?: string[];
  /** Ogg serial number; random by default. */
  serial?: number;
  /**
   * Packets per Ogg page. Default 1: every packet is sent as a complete page at once, so a live stream
   * never holds audio back (28 bytes of overhead per 20 ms). Larger values suit files.
   */
  packetsPerPage?: number;
}

/**
 * Turns Opus packets into an Ogg/Opus byte stream, page by page, as they are produced. The output starts
 * with the OpusHead and OpusTags pages, each alone on its page as RFC 7845 requires, and can be fed to a
 * player as a continuous live stream (e.g. @discordjs/voice's StreamType.OggOpus).
 */
export class OggOpusWriter {
  private readonly muxer: OggMuxer;
  private readonly head: Uint8Array;
  private readonly tags: Uint8Array;
  private readonly packetsPerPage: number;
  private headersWritten = false;
  private pending = 0;
  private granule: bigint;
  readonly preSkip: number;

  constructor(options: OggOpusWriterOptions = {}) {
    this.preSkip = options.preSkip ?? OPUS_ENCODER_PRESKIP;
    this.granule = 0n;
    this.packetsPerPage = Math.max(1, options.packetsPerPage ?? 1);
    this.muxer = new OggMuxer({ serial: options.serial ?? Math.floor(Math.random() * 0x1_0000_0000) });
    this.head = buildOpusHead({
      channels: options.channels ?? 1,
      preSkip: this.preSkip,
      inputSampleRate: options.inputSampleRate ?? 48000,
    });
    this.tags = buildOpusTags({
      vendor: options.vendor ?? "voice-bridge",
      comments: options.comments ?? [],
    });
  }

  /** Granule position after the packets written so far: 48 kHz samples, pre-skip included. */
  get granulePosition(): bigint {
    return this.granule;
  }

  /** The header pages; written automatically before the first packet, and only once. */
  headers(): Uint8Array {
    if (this.headersWritten) return new Uint8Array(0);
    this.headersWritten = true;
    const head = this.muxer.write(this.head, 0n, { flush: true });
    const tags = this.muxer.write(this.tags, 0n, { flush: true });
    return concat2(head, tags);
  }

  /** Adds one Opus packet (any frame duration); returns the bytes now ready to send. */
  write(packet: Uint8Array): Uint8Array {
    const headers = this.headers();
    this.granule += BigInt(opusPacketSamples48k(packet));
    this.pending++;
    const flush = this.pending >= this.packetsPerPage;
    if (flush) this.pending = 0;
    return concat2(headers, this.muxer.write(packet, this.granule, { flush }));
  }

  /** Sends whatever is buffered (only useful with packetsPerPage > 1). */
  flush(): Uint8Array {
    this.pending = 0;
    return concat2(this.headers(), this.muxer.flush());
  }

  /**
   * Ends the stream with an EOS page. Give the final packet here rather than to write() when you can:
   * players (ffmpeg among them) apply end trimming only from the page that carries the last packet.
   * `trimEndSamples` (48 kHz) shortens the played length, e.g. to drop the padding of a final
   * partly-filled frame.
   */
  end(options: { lastPacket?: Uint8Array; trimEndSamples?: number } = {}): Uint8Array {
    const headers = this.headers();
    const trim = BigInt(Math.max(0, options.trimEndSamples ?? 0));
    if (options.lastPacket) {
      this.granule += BigInt(opusPacketSamples48k(options.lastPacket));
      const final = this.granule - trim;
      return concat2(headers, this.muxer.write(options.lastPacket, final > 0n ? final : 0n, { eos: true }));
    }
    const final = this.granule - trim;
    return concat2(headers, this.muxer.end(final > 0n ? final : 0n));
  }
}

export interface OpusAudioPacket {
  data: Uint8Array;
  /** Duration in 48 kHz samples, from the packet's TOC. */
  samples48k: number;
  /** Page granule position when this packet ends its page, else OGG_NO_GRANULE (-1n). */
  granulePosition: bigint;
  /** Last packet of the stream (EOS page). */
  eos: boolean;
}

/**
 * Streaming Ogg/Opus reader: bytes in, audio packets out. Follows the first logical stream whose first
 * packet is an OpusHead (other multiplexed streams are ignored); a later OpusHead on a new BOS page
 * (a chained stream) switches to it. Packets before the headers have been seen are dropped.
 */
export class OggOpusReader {
  private readonly demuxer = new OggDemuxer();
  private serial: number | undefined;
  private needTags = false;
  head: OpusHead | undefined;
  tags: OpusTags | undefined;
  /** Granule position of the last page seen that had one. */
  lastGranulePosition = OGG_NO_GRANULE;
  ended = false;

  push(bytes: Uint8Array): OpusAudioPacket[] {
    const out: OpusAudioPacket[] = [];
    for (const p of this.demuxer.push(bytes)) {
      if (p.bos && isOpusHead(p.data)) {
        this.head = parseOpusHead(p.data);
        this.serial = p.serial;
        this.needTags = true;
        this.tags = undefined;
        continue;
      }
      if (p.serial !== this.serial) continue;
      if (this.needTags) {
        if (!isOpusTags(p.data)) throw new Error("Ogg/Opus: the packet after OpusHead is not OpusTags");
        this.tags = parseOpusTags(p.data);
        this.needTags = false;
        continue;
      }
      if (p.data.length === 0) continue; // zero-length packets are not valid Opus; skip (RFC 7845 §4)
      out.push({
        data: p.data,
        samples48k: opusPacketSamples48k(p.data),
        granulePosition: p.granulePosition,
        eos: p.eos,
      });
    }
    // Pages without packets (an empty EOS page) still carry the end and the final position.
    const info = this.serial === undefined ? undefined : this.demuxer.streamInfo(this.serial);
    if (info) {
      this.lastGranulePosition = info.lastGranulePosition;
      this.ended = info.ended;
    }
    return out;
  }
}

export interface OggOpusFile {
  head: OpusHead;
  tags: OpusTags;
  packets: Uint8Array[];
  /** Granule position of the last page (48 kHz, pre-skip included): the stream's end. */
  finalGranulePosition: bigint;
}

export function readOggOpus(bytes: Uint8Array): OggOpusFile {
  const reader = new OggOpusReader();
  const packets = reader.push(bytes).map((p) => p.data);
  if (!reader.head || !reader.tags) throw new Error("not an Ogg/Opus stream (no OpusHead/OpusTags)");
  return {
    head: reader.head,
    tags: reader.tags,
    packets,
    finalGranulePosition: reader.lastGranulePosition,
  };
}

/**
 * Decodes a whole Ogg/Opus file to interleaved PCM at `rate`, honouring pre-skip and the final granule
 * position (end trimming), so the result has the length the encoder was given. Off the hot path
 * (uploaded files, tests). Output gain from the header is not applied.
 */
export function decodeOggOpus(bytes: Uint8Array, rate: OpusRate = 48000, channels: 1 | 2 = 1): Int16Array {
  const file = readOggOpus(bytes);
  const codec = new OpusCodec(rate, channels);
  const ratio = rate / 48000;
  const decoded: Int16Array[] = [];
  let total = 0;
  for (const p of file.packets) {
    const pcm = codec.decode(p);
    decoded.push(pcm);
    total += pcm.length;
  }
  const skip = Math.round(file.head.preSkip * ratio) * channels;
  let end = total;
  if (file.finalGranulePosition >= 0n) {
    const playable = Number(file.finalGranulePosition) - file.head.preSkip;
    end = Math.min(total, skip + Math.max(0, Math.round(playable * ratio)) * channels);
  }
  const out = new Int16Array(Math.max(0, end - skip));
  let o = 0; // position in the full decoded stream
  for (const pcm of decoded) {
    const from = Math.max(0, skip - o);
    const to = Math.min(pcm.length, end - o);
    if (to > from) out.set(pcm.subarray(from, to), o + from - skip);
    o += pcm.length;
  }
  return out;
}

export type OpusRate = 48000 | 24000 | 16000 | 12000 | 8000;

export interface OpusCodecOptions {
  /** Encoder bitrate in bit/s (libopus chooses by default). */
  bitrate?: number;
  /** Encoder complexity 0–10: lower is cheaper on CPU. */
  complexity?: number;
}

interface NativeOpus {
  encode(buf: Buffer): Buffer;
  decode(buf: Buffer): Buffer;
  applyEncoderCTL(ctl: number, value: number): void;
  setBitrate(bitrate: number): void;
}
interface NativeOpusModule {
  OpusEncoder: new (rate: number, channels: number) => NativeOpus;
}
// The binding is CommonJS whose exports Node cannot list statically, so it is loaded through require.
const native = createRequire(import.meta.url)("@discordjs/opus") as NativeOpusModule;
const OPUS_SET_COMPLEXITY_REQUEST = 4010;
const VALID_FRAME_MS = [2.5, 5, 10, 20, 40, 60];

/**
 * One encoder and one decoder state (created lazily, so a decode-only codec costs no encoder). Decoding
 * works for any Opus packet whatever rate and channel count it was encoded with: libopus resamples and
 * downmixes itself, so Discord's 48 kHz stereo packets decode straight to 16 kHz mono here.
 */
export class OpusCodec {
  readonly rate: OpusRate;
  readonly channels: 1 | 2;
  /** Samples per channel in a 20 ms frame at this rate. */
  readonly frameSamples: number;
  private readonly opus: NativeOpus;

  constructor(rate: OpusRate, channels: 1 | 2, options: OpusCodecOptions = {}) {
    if (![48000, 24000, 16000, 12000, 8000].includes(rate))
      throw new RangeError(`Opus cannot run at ${rate} Hz`);
    if (channels !== 1 && channels !== 2) throw new RangeError("Opus codec: 1 or 2 channels");
    this.rate = rate;
    this.channels = channels;
    this.frameSamples = rate / 50;
    this.opus = new native.OpusEncoder(rate, channels);
    if (options.bitrate !== undefined) this.opus.setBitrate(options.bitrate);
    if (options.complexity !== undefined) {
      this.opus.applyEncoderCTL(OPUS_SET_COMPLEXITY_REQUEST, options.complexity);
    }
  }

  /** Encodes one frame of interleaved PCM (2.5, 5, 10, 20, 40 or 60 ms) into one packet. */
  encode(pcm: Int16Array): Uint8Array {
    const perChannel = pcm.length / this.channels;
    const ms = (perChannel * 1000) / this.rate;
    if (!Number.isInteger(perChannel) || !VALID_FRAME_MS.includes(ms)) {
      throw new RangeError(`Opus frames are 2.5–60 ms; got ${pcm.length} samples at ${this.rate} Hz`);
    }
    const out = this.opus.encode(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  }

  /** Decodes one packet into interleaved PCM at this codec's rate and channel count. */
  decode(packet: Uint8Array): Int16Array {
    if (packet.length === 0) throw new RangeError("an Opus packet has at least one byte");
    const out = this.opus.decode(Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength));
    if (out.byteOffset % 2 === 0) return new Int16Array(out.buffer, out.byteOffset, out.length >> 1);
    return new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.length));
  }

  /**
   * libopus's packet loss concealment: `samples` per channel of audio continuing the last packet
   * decoded, for a packet that never came. Handed an empty packet, the binding asks libopus to
   * conceal its whole output buffer (5760 samples); the first `samples` stand in for the lost one.
   */
  conceal(samples: number): Int16Array {
    const out = this.opus.decode(EMPTY_PACKET);
    const bytes = Math.min(out.length, samples * this.channels * 2);
    if (out.byteOffset % 2 === 0) return new Int16Array(out.buffer, out.byteOffset, bytes >> 1);
    return new Int16Array(out.buffer.slice(out.byteOffset, out.byteOffset + bytes));
  }
}

const EMPTY_PACKET = Buffer.alloc(0);

function concat2(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
