// Ogg bitstream framing (RFC 3533): pages with lacing, CRC and granule positions.
// Streaming both ways: OggDemuxer turns arbitrary byte chunks into packets, OggMuxer turns packets into
// page bytes and can close a page after any packet so a live stream is playable as it is produced.

const HEADER_BYTES = 27;
const MAX_SEGMENTS = 255;
const CAPTURE = [0x4f, 0x67, 0x67, 0x53]; // "OggS"

export const OGG_FLAG_CONTINUED = 0x01;
export const OGG_FLAG_BOS = 0x02;
export const OGG_FLAG_EOS = 0x04;
/** Granule position of a page on which no packet ends. */
export const OGG_NO_GRANULE = -1n;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** Ogg's CRC-32: polynomial 0x04c11db7, MSB first, initial value 0, no final XOR. */
export function oggCrc32(bytes: Uint8Array, crc = 0): number {
  let c = crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = (c << 8) ^ CRC_TABLE[((c >>> 24) ^ bytes[i]!) & 0xff]!;
  return c >>> 0;
}

export interface OggPage {
  /** The page begins with the rest of a packet started on the previous page. */
  continued: boolean;
  bos: boolean;
  eos: boolean;
  /** Codec-defined position of the last packet that ends on this page; OGG_NO_GRANULE if none ends here. */
  granulePosition: bigint;
  serial: number;
  sequence: number;
  /** Lacing values: a value below 255 ends a packet. */
  segments: Uint8Array;
  body: Uint8Array;
}

export function encodeOggPage(page: OggPage): Uint8Array {
  const nseg = page.segments.length;
  if (nseg > MAX_SEGMENTS) throw new RangeError(`an Ogg page holds at most 255 segments, got ${nseg}`);
  let bodyLen = 0;
  for (const s of page.segments) bodyLen += s;
  if (bodyLen !== page.body.length) throw new RangeError("Ogg page body length does not match its lacing");
  const out = new Uint8Array(HEADER_BYTES + nseg + bodyLen);
  const view = new DataView(out.buffer);
  out.set(CAPTURE, 0);
  out[4] = 0; // stream structure version
  out[5] =
    (page.continued ? OGG_FLAG_CONTINUED : 0) | (page.bos ? OGG_FLAG_BOS : 0) | (page.eos ? OGG_FLAG_EOS : 0);
  view.setBigInt64(6, page.granulePosition, true);
  view.setUint32(14, page.serial >>> 0, true);
  view.setUint32(18, page.sequence >>> 0, true);
  out[26] = nseg;
  out.set(page.segments, HEADER_BYTES);
  out.set(page.body, HEADER_BYTES + nseg);
  view.setUint32(22, oggCrc32(out), true); // CRC computed with its own field zero, as it is here
  return out;
}

/**
 * Splits a byte stream into verified pages. Garbage and pages with a bad CRC are skipped by searching for
 * the next capture pattern, so a damaged or mid-stream start recovers at the next good page.
 */
export class OggPageParser {
  private buf = new Uint8Array(0);
  private start = 0;
  private end = 0;
  /** Bytes skipped while resynchronising (garbage, damaged pages). */
  skippedBytes = 0;
  /** Pages dropped because their CRC did not match. */
  crcErrors = 0;

  push(chunk: Uint8Array): OggPage[] {
    this.append(chunk);
    const pages: OggPage[] = [];
    for (;;) {
      if (!this.findCapture()) break;
      const b = this.buf;
      const p = this.start;
      if (this.end - p < HEADER_BYTES) break;
      const nseg = b[p + 26]!;
      if (this.end - p < HEADER_BYTES + nseg) break;
      let bodyLen = 0;
      for (let i = 0; i < nseg; i++) bodyLen += b[p + HEADER_BYTES + i]!;
      const total = HEADER_BYTES + nseg + bodyLen;
      if (this.end - p < total) break;
      const bytes = b.subarray(p, p + total);
      const isPage = b[p + 4] === 0; // stream structure version 0 is the only one defined
      if (!isPage || !crcMatches(bytes)) {
        if (isPage) this.crcErrors++;
        this.start += 1;
        this.skippedBytes += 1;
        continue;
      }
      pages.push(decodeVerifiedPage(bytes.slice()));
      this.start += total;
    }
    return pages;
  }

  private append(chunk: Uint8Array): void {
    if (this.end + chunk.length > this.buf.length) {
      const live = this.end - this.start;
      if (live + chunk.length <= this.buf.length) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        const next = new Uint8Array(Math.max(live + chunk.length, this.buf.length * 2, 4096));
        next.set(this.buf.subarray(this.start, this.end));
        this.buf = next;
      }
      this.start = 0;
      this.end = live;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
  }

  /** Advances `start` to the next "OggS"; false when more bytes are needed to find one. */
  private findCapture(): boolean {
    const b = this.buf;
    let p = this.start;
    for (; p + 4 <= this.end; p++) {
      if (b[p] === 0x4f && b[p + 1] === 0x67 && b[p + 2] === 0x67 && b[p + 3] === 0x53) {
        this.skippedBytes += p - this.start;
        this.start = p;
        return true;
      }
    }
    // Keep the last 3 bytes: they may begin a capture pattern split across chunks.
    const keep = Math.max(this.start, this.end - 3);
    this.skippedBytes += keep - this.start;
    this.start = keep;
    return false;
  }
}

function crcMatches(page: Uint8Array): boolean {
  const stored = new DataView(page.buffer, page.byteOffset, page.byteLength).getUint32(22, true);
  let crc = oggCrc32(page.subarray(0, 22));
  crc = oggCrc32(ZERO_CRC, crc);
  crc = oggCrc32(page.subarray(26), crc);
  return crc === stored;
}
const ZERO_CRC = new Uint8Array(4);

function decodeVerifiedPage(bytes: Uint8Array): OggPage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const flags = bytes[5]!;
  const nseg = bytes[26]!;
  return {
    continued: (flags & OGG_FLAG_CONTINUED) !== 0,
    bos: (flags & OGG_FLAG_BOS) !== 0,
    eos: (flags & OGG_FLAG_EOS) !== 0,
    granulePosition: view.getBigInt64(6, true),
    serial: view.getUint32(14, true),
    sequence: view.getUint32(18, true),
    segments: bytes.subarray(HEADER_BYTES, HEADER_BYTES + nseg),
    body: bytes.subarray(HEADER_BYTES + nseg),
  };
}

export interface OggPacket {
  serial: number;
  data: Uint8Array;
  /** The page's granule position if this packet is the last one ending on it, else OGG_NO_GRANULE. */
  granulePosition: bigint;
  /** First packet of its logical stream (on the BOS page). */
  bos: boolean;
  /** Last packet of its logical stream (ends on the EOS page). */
  eos: boolean;
  /** Sequence number of the page the packet ends on. */
  pageSequence: number;
}

export interface OggStreamInfo {
  /** Granule position of the stream's latest page that had one (an empty EOS page included). */
  lastGranulePosition: bigint;
  /** An EOS page has been seen. */
  ended: boolean;
}

interface StreamState extends OggStreamInfo {
  parts: Uint8Array[];
  partLen: number;
  nextSequence: number;
  /** False until the first packet boundary after a gap: leading continuation bytes cannot be used. */
  synced: boolean;
}

/** Reassembles packets (which may span pages) for every logical stream in the byte stream. */
export class OggDemuxer {
  private readonly pages = new OggPageParser();
  private readonly streams = new Map<number, StreamState>();
  /** Packets dropped because a page was missing or damaged. */
  lostPackets = 0;

  get crcErrors(): number {
    return this.pages.crcErrors;
  }

  /** Position and end state of a logical stream, including what pages without packets told. */
  streamInfo(serial: number): OggStreamInfo | undefined {
    const s = this.streams.get(serial);
    return s && { lastGranulePosition: s.lastGranulePosition, ended: s.ended };
  }

  push(chunk: Uint8Array): OggPacket[] {
    const out: OggPacket[] = [];
    for (const page of this.pages.push(chunk)) this.demuxPage(page, out);
    return out;
  }

  private demuxPage(page: OggPage, out: OggPacket[]): void {
    let s = this.streams.get(page.serial);
    if (!s || page.bos) {
      s = {
        parts: [],
        partLen: 0,
        nextSequence: page.sequence,
        synced: !page.continued,
        lastGranulePosition: OGG_NO_GRANULE,
        ended: false,
      };
      this.streams.set(page.serial, s);
    }
    if (page.sequence !== s.nextSequence) {
      // A page went missing: any packet in progress is incomplete.
      if (s.partLen > 0) this.lostPackets++;
      s.parts = [];
      s.partLen = 0;
      s.synced = !page.continued;
    } else if (!page.continued && s.partLen > 0) {
      this.lostPackets++;
      s.parts = [];
      s.partLen = 0;
    }
    s.nextSequence = (page.sequence + 1) >>> 0;

    const first = out.length;
    let offset = 0;
    for (let i = 0; i < page.segments.length; i++) {
      const len = page.segments[i]!;
      const seg = page.body.subarray(offset, offset + len);
      offset += len;
      if (s.synced) {
        s.parts.push(seg);
        s.partLen += len;
      }
      if (len < 255) {
        if (s.synced) out.push(this.completePacket(s, page));
        s.synced = true;
      }
    }
    if (out.length > first) {
      const last = out[out.length - 1]!;
      last.granulePosition = page.granulePosition;
      last.eos = page.eos;
      out[first]!.bos = page.bos && !page.continued;
    }
    if (page.granulePosition !== OGG_NO_GRANULE) s.lastGranulePosition = page.granulePosition;
    if (page.eos) s.ended = true;
  }

  private completePacket(s: StreamState, page: OggPage): OggPacket {
    const data = s.parts.length === 1 ? s.parts[0]! : concat(s.parts, s.partLen);
    s.parts = [];
    s.partLen = 0;
    return {
      serial: page.serial,
      data,
      granulePosition: OGG_NO_GRANULE,
      bos: false,
      eos: false,
      pageSequence: page.sequence,
    };
  }
}

export interface OggMuxerOptions {
  serial: number;
}

export interface OggWriteOptions {
  /** Close the page after this packet (live streaming, or a header that must sit alone on its page). */
  flush?: boolean;
  /** This is the stream's last packet: close the page with the EOS flag. */
  eos?: boolean;
}

/**
 * Packs one logical stream's packets into pages. Returned bytes are complete pages, ready to send.
 * A packet only continues onto a next page when it is too big for a page of its own (64 KiB).
 */
export class OggMuxer {
  readonly serial: number;
  private sequence = 0;
  private segments: number[] = [];
  private parts: Uint8Array[] = [];
  private bodyLen = 0;
  private pageGranule = OGG_NO_GRANULE;
  private pageContinued = false;
  private ended = false;

  constructor(options: OggMuxerOptions) {
    this.serial = options.serial >>> 0;
  }

  /** Pages written so far. */
  get pageCount(): number {
    return this.sequence;
  }

  /**
   * Adds a packet ending at `granulePosition` (codec-defined). Returns any pages completed by it: pages
   * that filled up (255 segments), plus the current page if `flush` or `eos` is set.
   */
  write(packet: Uint8Array, granulePosition: bigint, options: OggWriteOptions = {}): Uint8Array {
    if (this.ended) throw new Error("OggMuxer: write after end of stream");
    const pages: Uint8Array[] = [];
    // Start a fresh page rather than split a packet that would fit on one: simple demuxers (prism-media's,
    // which @discordjs/voice uses for StreamType.OggOpus) cannot join packets across pages.
    const lacing = Math.floor(packet.length / 255) + 1;
    if (this.segments.length > 0 && this.segments.length + lacing > MAX_SEGMENTS)
      pages.push(this.closePage(false));
    let offset = 0;
    for (;;) {
      if (this.segments.length === MAX_SEGMENTS) {
        pages.push(this.closePage(false));
        this.pageContinued = offset > 0;
      }
      const take = Math.min(255, packet.length - offset);
      this.segments.push(take);
      this.parts.push(packet.subarray(offset, offset + take));
      this.bodyLen += take;
      offset += take;
      if (take < 255) break; // a lacing value below 255 ends the packet (0 after an exact multiple of 255)
    }
    this.pageGranule = granulePosition;
    if (options.eos) {
      pages.push(this.closePage(true));
      this.ended = true;
    } else if (options.flush) {
      pages.push(this.closePage(false));
    }
    return concat(pages);
  }

  /** Closes the current page if it holds anything. */
  flush(): Uint8Array {
    return this.segments.length > 0 ? this.closePage(false) : new Uint8Array(0);
  }

  /**
   * Ends the stream: closes the current page with EOS, or writes an empty EOS page carrying
   * `granulePosition` (a stream's end may come after its last packet was already flushed).
   */
  end(granulePosition?: bigint): Uint8Array {
    if (this.ended) return new Uint8Array(0);
    this.ended = true;
    if (granulePosition !== undefined) this.pageGranule = granulePosition;
    return this.closePage(true);
  }

  private closePage(eos: boolean): Uint8Array {
    const bytes = encodeOggPage({
      continued: this.pageContinued,
      bos: this.sequence === 0,
      eos,
      granulePosition: this.lastPacketEndsHere() ? this.pageGranule : OGG_NO_GRANULE,
      serial: this.serial,
      sequence: this.sequence,
      segments: Uint8Array.from(this.segments),
      body: concat(this.parts, this.bodyLen),
    });
    this.sequence++;
    this.segments = [];
    this.parts = [];
    this.bodyLen = 0;
    this.pageContinued = false;
    return bytes;
  }

  private lastPacketEndsHere(): boolean {
    const n = this.segments.length;
    // An empty (EOS-only) page carries the stream's final position.
    if (n === 0) return true;
    for (let i = 0; i < n; i++) if (this.segments[i]! < 255) return true;
    return false;
  }
}

function concat(parts: Uint8Array[], total?: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let len = total ?? 0;
  if (total === undefined) for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
