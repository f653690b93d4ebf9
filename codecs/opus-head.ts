// The two Ogg/Opus header packets (RFC 7845 §5): identification (OpusHead) and comments (OpusTags).

export interface OpusHead {
  /** Output channel count. */
  channels: number;
  /** Samples at 48 kHz to drop from the start of the decoded stream (encoder lookahead). */
  preSkip: number;
  /** Sample rate of the original input; informational only, Opus always decodes at 48 kHz internally. */
  inputSampleRate: number;
  /** Gain to apply on output, in Q7.8 dB. */
  outputGain: number;
  /** 0: mono/stereo, one stream; other families carry a channel mapping table. */
  mappingFamily: number;
  streamCount: number;
  coupledCount: number;
  channelMapping: number[];
}

export interface OpusTags {
  vendor: string;
  /** "KEY=value" user comments. */
  comments: string[];
}

const HEAD_MAGIC = "OpusHead";
const TAGS_MAGIC = "OpusTags";
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

export function startsWithMagic(packet: Uint8Array, magic: string): boolean {
  if (packet.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (packet[i] !== magic.charCodeAt(i)) return false;
  return true;
}

export function isOpusHead(packet: Uint8Array): boolean {
  return startsWithMagic(packet, HEAD_MAGIC);
}

export function isOpusTags(packet: Uint8Array): boolean {
  return startsWithMagic(packet, TAGS_MAGIC);
}

export function buildOpusHead(head: Partial<OpusHead> & { channels: number }): Uint8Array {
  const family = head.mappingFamily ?? 0;
  const mapping = head.channelMapping ?? [];
  if (family === 0 && (head.channels < 1 || head.channels > 2)) {
    throw new RangeError("mapping family 0 carries 1 or 2 channels");
  }
  if (family !== 0 && mapping.length !== head.channels) {
    throw new RangeError("a channel mapping table needs one entry per channel");
  }
  const out = new Uint8Array(19 + (family === 0 ? 0 : 2 + mapping.length));
  const view = new DataView(out.buffer);
  out.set(utf8.encode(HEAD_MAGIC), 0);
  out[8] = 1; // version
  out[9] = head.channels;
  view.setUint16(10, head.preSkip ?? 312, true);
  view.setUint32(12, head.inputSampleRate ?? 48000, true);
  view.setInt16(16, head.outputGain ?? 0, true);
  out[18] = family;
  if (family !== 0) {
    out[19] = head.streamCount ?? 1;
    out[20] = head.coupledCount ?? 0;
    out.set(mapping, 21);
  }
  return out;
}

export function parseOpusHead(packet: Uint8Array): OpusHead {
  if (!isOpusHead(packet) || packet.length < 19) throw new Error("not an OpusHead packet");
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  const version = packet[8]!;
  // Minor versions are compatible; a new major version (upper nibble) is not.
  if (version >> 4 !== 0) throw new Error(`unsupported OpusHead version ${version}`);
  const channels = packet[9]!;
  if (channels === 0) throw new Error("OpusHead with zero channels");
  const mappingFamily = packet[18]!;
  const head: OpusHead = {
    channels,
    preSkip: view.getUint16(10, true),
    inputSampleRate: view.getUint32(12, true),
    outputGain: view.getInt16(16, true),
    mappingFamily,
    streamCount: 1,
    coupledCount: channels === 2 ? 1 : 0,
    channelMapping: channels === 2 ? [0, 1] : [0],
  };
  if (mappingFamily !== 0) {
    if (packet.length < 21 + channels) throw new Error("OpusHead channel mapping table is truncated");
    head.streamCount = packet[19]!;
    head.coupledCount = packet[20]!;
    head.channelMapping = Array.from(packet.subarray(21, 21 + channels));
  } else if (channels > 2) {
    throw new Error("mapping family 0 carries 1 or 2 channels");
  }
  return head;
}

export function buildOpusTags(tags: OpusTags): Uint8Array {
  const vendor = utf8.encode(tags.vendor);
  const comments = tags.comments.map((c) => utf8.encode(c));
  let len = 8 + 4 + vendor.length + 4;
  for (const c of comments) len += 4 + c.length;
  const out = new Uint8Array(len);
  const view = new DataView(out.buffer);
  out.set(utf8.encode(TAGS_MAGIC), 0);
  let o = 8;
  view.setUint32(o, vendor.length, true);
  out.set(vendor, o + 4);
  o += 4 + vendor.length;
  view.setUint32(o, comments.length, true);
  o += 4;
  for (const c of comments) {
    view.setUint32(o, c.length, true);
    out.set(c, o + 4);
    o += 4 + c.length;
  }
  return out;
}

export function parseOpusTags(packet: Uint8Array): OpusTags {
  if (!isOpusTags(packet)) throw new Error("not an OpusTags packet");
  const view = new DataView(packet.buffer, packet.byteOffset, packet.byteLength);
  let o = 8;
  const field = (): string => {
    if (o + 4 > packet.length) throw new Error("OpusTags is truncated");
    const n = view.getUint32(o, true);
    if (o + 4 + n > packet.length) throw new Error("OpusTags is truncated");
    const s = fromUtf8.decode(packet.subarray(o + 4, o + 4 + n));
    o += 4 + n;
    return s;
  };
  const vendor = field();
  if (o + 4 > packet.length) throw new Error("OpusTags is truncated");
  const count = view.getUint32(o, true);
  o += 4;
  const comments: string[] = [];
  // Any bytes after the comments are padding or private data (RFC 7845 §5.2): ignored.
  for (let i = 0; i < count; i++) comments.push(field());
  return { vendor, comments };
}
