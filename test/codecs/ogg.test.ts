import { describe, expect, it } from "vitest";
import {
  encodeOggPage,
  OGG_NO_GRANULE,
  OggDemuxer,
  OggMuxer,
  type OggPacket,
  OggPageParser,
  oggCrc32,
} from "../../codecs/ogg.ts";
import { run } from "./helpers/run.ts";

/** Deterministic bytes so failures reproduce. */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}

function splitRandomly(data: Uint8Array, seed: number, maxChunk: number): Uint8Array[] {
  const sizes = bytes(data.length, seed);
  const chunks: Uint8Array[] = [];
  for (let o = 0, i = 0; o < data.length; i++) {
    const n = 1 + (sizes[i]! % maxChunk);
    chunks.push(data.subarray(o, o + n));
    o += n;
  }
  return chunks;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function demuxAll(data: Uint8Array, chunks?: Uint8Array[]): { packets: OggPacket[]; demuxer: OggDemuxer } {
  const demuxer = new OggDemuxer();
  const packets: OggPacket[] = [];
  for (const c of chunks ?? [data]) packets.push(...demuxer.push(c));
  return { packets, demuxer };
}

/** Reference CRC straight from the definition: polynomial division bit by bit, no table. */
function bitwiseCrc(data: Uint8Array): number {
  let crc = 0;
  for (const b of data) {
    crc ^= b << 24;
    for (let i = 0; i < 8; i++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

describe("oggCrc32", () => {
  it("matches the bitwise definition and is incremental", () => {
    const data = bytes(1000, 7);
    expect(oggCrc32(data)).toBe(bitwiseCrc(data));
    expect(oggCrc32(data.subarray(300), oggCrc32(data.subarray(0, 300)))).toBe(bitwiseCrc(data));
    expect(oggCrc32(new Uint8Array(0))).toBe(0);
  });

  it("accepts every page of a file written by ffmpeg and rejects a flipped bit", () => {
    const ogg = run("ffmpeg", [
      ...["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=500:duration=0.5"],
      ...["-c:a", "libopus", "-f", "ogg", "-"],
    ]);
    const parser = new OggPageParser();
    const pages = parser.push(ogg);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(parser.crcErrors).toBe(0);
    expect(parser.skippedBytes).toBe(0);

    const damaged = ogg.slice();
    damaged[damaged.length - 10]! ^= 0x04;
    const p2 = new OggPageParser();
    expect(p2.push(damaged).length).toBe(pages.length - 1);
    expect(p2.crcErrors).toBe(1);
  });
});

describe("encodeOggPage", () => {
  it("lays out the RFC 3533 header", () => {
    const page = encodeOggPage({
      continued: true,
      bos: false,
      eos: true,
      granulePosition: 0x0102030405n,
      serial: 0xdeadbeef,
      sequence: 7,
      segments: Uint8Array.of(255, 10),
      body: bytes(265, 3),
    });
    expect(Array.from(page.subarray(0, 4))).toEqual([0x4f, 0x67, 0x67, 0x53]);
    const v = new DataView(page.buffer);
    expect(page[4]).toBe(0);
    expect(page[5]).toBe(0x05);
    expect(v.getBigInt64(6, true)).toBe(0x0102030405n);
    expect(v.getUint32(14, true)).toBe(0xdeadbeef);
    expect(v.getUint32(18, true)).toBe(7);
    expect(page[26]).toBe(2);
    expect(page.length).toBe(27 + 2 + 265);
    const zeroed = page.slice();
    zeroed.fill(0, 22, 26);
    expect(v.getUint32(22, true)).toBe(bitwiseCrc(zeroed));
  });

  it("refuses lacing that does not match the body", () => {
    const page = {
      continued: false,
      bos: false,
      eos: false,
      granulePosition: 0n,
      serial: 1,
      sequence: 0,
      segments: Uint8Array.of(3),
      body: new Uint8Array(4),
    };
    expect(() => encodeOggPage(page)).toThrow(RangeError);
  });
});

describe("OggMuxer + OggDemuxer", () => {
  // Sizes around the lacing edge cases: empty, <255, exactly 255 (needs a 0 terminator), multiples,
  // and packets larger than one page (255 × 255 bytes) that must continue onto following pages.
  const sizes = [0, 1, 254, 255, 256, 510, 1000, 65025, 70000, 3, 200_000, 17];
  const packets = sizes.map((n, i) => bytes(n, 100 + i));

  function muxAll(flushEach: boolean): { data: Uint8Array; muxer: OggMuxer } {
    const muxer = new OggMuxer({ serial: 0x1234 });
    const out = packets.map((p, i) =>
      muxer.write(p, BigInt((i + 1) * 960), { flush: flushEach, eos: i === packets.length - 1 }),
    );
    return { data: concat(out), muxer };
  }

  it("round-trips packets of every lacing edge size, whole or split into tiny chunks", () => {
    for (const flushEach of [true, false]) {
      const { data } = muxAll(flushEach);
      for (const chunks of [undefined, splitRandomly(data, 9, 7), splitRandomly(data, 11, 4000)]) {
        const { packets: got, demuxer } = demuxAll(data, chunks);
        expect(got.map((p) => p.data.length)).toEqual(sizes);
        expect(got.map((p) => p.data)).toEqual(packets);
        expect(demuxer.lostPackets).toBe(0);
        expect(got.every((p) => p.serial === 0x1234)).toBe(true);
        expect(got[0]!.bos).toBe(true);
        expect(got.slice(1).some((p) => p.bos)).toBe(false);
        expect(got.at(-1)!.eos).toBe(true);
        expect(got.slice(0, -1).some((p) => p.eos)).toBe(false);
      }
    }
  });

  it("sets flags, sequence numbers and granule positions page by page", () => {
    const { data } = muxAll(true);
    const pages = new OggPageParser().push(data);
    expect(pages.map((p) => p.sequence)).toEqual(pages.map((_, i) => i));
    expect(pages[0]!.bos).toBe(true);
    expect(pages.filter((p) => p.bos).length).toBe(1);
    expect(pages.at(-1)!.eos).toBe(true);
    // 65025 bytes = 255 full segments + a 0 terminator: the page fills and the terminator continues.
    // A page on which no packet ends carries granule -1; the next page is flagged as a continuation.
    const spanning = pages.filter((p) => p.granulePosition === OGG_NO_GRANULE);
    expect(spanning.length).toBeGreaterThanOrEqual(4);
    for (const p of spanning) {
      expect(p.segments.length).toBe(255);
      expect(Array.from(p.segments).every((s) => s === 255)).toBe(true);
      const next = pages[p.sequence + 1]!;
      expect(next.continued).toBe(true);
    }
    // With a flush after every packet, each page's granule is the position of the packet ending on it.
    const granules = pages.filter((p) => p.granulePosition !== OGG_NO_GRANULE).map((p) => p.granulePosition);
    expect(granules).toEqual(sizes.map((_, i) => BigInt((i + 1) * 960)));
  });

  it("reports the granule only on the last packet that ends on a page", () => {
    const muxer = new OggMuxer({ serial: 5 });
    const data = concat([
      muxer.write(bytes(10, 1), 100n),
      muxer.write(bytes(10, 2), 200n),
      muxer.write(bytes(10, 3), 300n, { flush: true }),
      muxer.write(bytes(10, 4), 400n),
      muxer.end(),
    ]);
    const { packets: got } = demuxAll(data);
    expect(got.map((p) => p.granulePosition)).toEqual([OGG_NO_GRANULE, OGG_NO_GRANULE, 300n, 400n]);
    expect(got.map((p) => p.pageSequence)).toEqual([0, 0, 0, 1]);
  });

  it("returns nothing until a page is closed, then exactly the packets on it (live streaming)", () => {
    const muxer = new OggMuxer({ serial: 9 });
    const demuxer = new OggDemuxer();
    expect(muxer.write(bytes(50, 1), 960n)).toHaveLength(0);
    const page = muxer.write(bytes(50, 2), 1920n, { flush: true });
    expect(demuxer.push(page).map((p) => p.data.length)).toEqual([50, 50]);
    for (let i = 3; i < 8; i++) {
      const got = demuxer.push(muxer.write(bytes(40 + i, i), BigInt(i * 960), { flush: true }));
      expect(got).toHaveLength(1);
      expect(got[0]!.data).toEqual(bytes(40 + i, i));
      expect(got[0]!.granulePosition).toBe(BigInt(i * 960));
    }
  });

  it("ends a stream with an empty EOS page when the last packet was already flushed", () => {
    const muxer = new OggMuxer({ serial: 9 });
    const first = muxer.write(bytes(20, 1), 960n, { flush: true });
    const end = muxer.end(900n);
    const pages = new OggPageParser().push(concat([first, end]));
    expect(pages).toHaveLength(2);
    expect(pages[1]!.eos).toBe(true);
    expect(pages[1]!.segments.length).toBe(0);
    expect(pages[1]!.granulePosition).toBe(900n);
    expect(() => muxer.write(bytes(1, 1), 1n)).toThrow();
  });

  it("resynchronises after garbage and drops only the packets of a damaged or missing page", () => {
    const muxer = new OggMuxer({ serial: 77 });
    const pages = Array.from({ length: 6 }, (_, i) => muxer.write(bytes(30, i), BigInt(i), { flush: true }));
    const garbage = bytes(100, 42);
    garbage[10] = 0x4f; // a stray "O" must not confuse the search
    {
      const damaged = pages[2]!.slice();
      damaged[40]! ^= 0xff;
      const { packets: got, demuxer } = demuxAll(concat([garbage, pages[0]!, pages[1]!, damaged, pages[3]!]));
      expect(got.map((p) => p.data)).toEqual([bytes(30, 0), bytes(30, 1), bytes(30, 3)]);
      expect(demuxer.crcErrors).toBe(1);
    }
    {
      const { packets: got } = demuxAll(concat([pages[0]!, pages[1]!, pages[4]!, pages[5]!]));
      expect(got.map((p) => p.data)).toEqual([bytes(30, 0), bytes(30, 1), bytes(30, 4), bytes(30, 5)]);
    }
  });

  it("loses a packet spanning pages when one of its pages is missing, and recovers after it", () => {
    const muxer = new OggMuxer({ serial: 3 });
    const data = concat([
      muxer.write(bytes(10, 1), 1n, { flush: true }),
      muxer.write(bytes(70000, 5), 2n), // 255 segments on one page, the rest continued on the next
      muxer.write(bytes(10, 2), 3n, { flush: true }),
      muxer.write(bytes(10, 3), 4n, { flush: true }),
    ]);
    const pages = new OggPageParser().push(data).map(encodeOggPage);
    expect(pages).toHaveLength(4);
    {
      // Without the big packet's first page, its tail on the next page must be skipped, not emitted.
      const { packets: got, demuxer } = demuxAll(concat([pages[0]!, pages[2]!, pages[3]!]));
      expect(got.map((p) => p.data)).toEqual([bytes(10, 1), bytes(10, 2), bytes(10, 3)]);
      expect(demuxer.lostPackets).toBe(0);
    }
    {
      // Without its second page, the part already held is discarded when the gap is seen.
      const { packets: got, demuxer } = demuxAll(concat([pages[0]!, pages[1]!, pages[3]!]));
      expect(got.map((p) => p.data)).toEqual([bytes(10, 1), bytes(10, 3)]);
      expect(demuxer.lostPackets).toBe(1);
    }
  });

  it("never splits a packet that fits on a page of its own (demuxers like prism-media's need that)", () => {
    const muxer = new OggMuxer({ serial: 4 });
    const sizes = Array.from({ length: 400 }, (_, i) => 1 + ((i * 7919) % 1200));
    const data = concat([...sizes.map((n, i) => muxer.write(bytes(n, i), BigInt(i))), muxer.end()]);
    const pages = new OggPageParser().push(data);
    expect(pages.length).toBeGreaterThanOrEqual(5);
    for (const page of pages) {
      expect(page.continued).toBe(false);
      if (page.segments.length > 0) expect(page.segments.at(-1)).toBeLessThan(255);
      expect(page.granulePosition).not.toBe(OGG_NO_GRANULE);
    }
    expect(demuxAll(data).packets.map((p) => p.data.length)).toEqual(sizes);
  });

  it("keeps interleaved logical streams apart", () => {
    const a = new OggMuxer({ serial: 1 });
    const b = new OggMuxer({ serial: 2 });
    const parts: Uint8Array[] = [];
    for (let i = 0; i < 5; i++) {
      parts.push(a.write(bytes(300 + i, i), BigInt(i), { flush: true }));
      parts.push(b.write(bytes(20 + i, 50 + i), BigInt(i), { flush: true }));
    }
    const { packets: got } = demuxAll(concat(parts));
    expect(got.filter((p) => p.serial === 1).map((p) => p.data.length)).toEqual([300, 301, 302, 303, 304]);
    expect(got.filter((p) => p.serial === 2).map((p) => p.data.length)).toEqual([20, 21, 22, 23, 24]);
    expect(got.filter((p) => p.bos).map((p) => p.serial)).toEqual([1, 2]);
  });
});
