import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeOggPage, OggDemuxer, OggMuxer, OggPageParser } from "../../codecs/ogg.ts";
import {
  decodeOggOpus,
  OggOpusReader,
  OggOpusWriter,
  OPUS_ENCODER_PRESKIP,
  OpusCodec,
  readOggOpus,
} from "../../codecs/opus.ts";
import { buildOpusHead, buildOpusTags, parseOpusHead, parseOpusTags } from "../../codecs/opus-head.ts";
import { opusFrameCount, opusPacketIsStereo, opusPacketSamples48k } from "../../codecs/opus-packet.ts";
import { run, s16le } from "./helpers/run.ts";

const dir = mkdtempSync(join(tmpdir(), "opus-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QUIET = ["-hide_banner", "-loglevel", "error"];

function tone(
  freq: number,
  rate: number,
  samples: number,
  amplitude = 0.5,
  channels = 1,
  phase = 0,
): Int16Array {
  const out = new Int16Array(samples * channels);
  for (let i = 0; i < samples; i++) {
    const v = Math.round(amplitude * 32767 * Math.sin((2 * Math.PI * freq * i) / rate + phase));
    for (let c = 0; c < channels; c++) out[i * channels + c] = v;
  }
  return out;
}

/** Interleaved stereo with a different tone in each channel. */
function stereoTones(left: number, right: number, rate: number, samples: number): Int16Array {
  const l = tone(left, rate, samples);
  const r = tone(right, rate, samples);
  const out = new Int16Array(samples * 2);
  for (let i = 0; i < samples; i++) {
    out[2 * i] = l[i]!;
    out[2 * i + 1] = r[i]!;
  }
  return out;
}

function channel(pcm: Int16Array, ch: number, channels: number): Int16Array {
  const out = new Int16Array(pcm.length / channels);
  for (let i = 0; i < out.length; i++) out[i] = pcm[i * channels + ch]!;
  return out;
}

/** Frequency of a pure tone from its zero crossings, ignoring the edges where codecs ramp. */
function toneFrequency(pcm: Int16Array, rate: number): number {
  const body = pcm.subarray(Math.floor(pcm.length * 0.1), Math.floor(pcm.length * 0.9));
  let crossings = 0;
  for (let i = 1; i < body.length; i++) if (body[i - 1]! < 0 !== body[i]! < 0) crossings++;
  return (crossings / 2) * (rate / body.length);
}

/** Zero crossings over 0.8 s resolve about 0.6 Hz; codecs add a little jitter at the frame edges. */
function expectFrequency(pcm: Int16Array, rate: number, hz: number): void {
  expect(Math.abs(toneFrequency(pcm, rate) - hz)).toBeLessThan(hz * 0.005 + 1);
}

/** Lag (in samples) at which `b` best matches `a`, searched within ±maxLag. */
function bestLag(a: Int16Array, b: Int16Array, maxLag: number): number {
  let best = 0;
  let bestScore = Number.NEGATIVE_INFINITY;
  const from = maxLag;
  const to = Math.min(a.length, b.length) - maxLag;
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let s = 0;
    for (let i = from; i < to; i++) s += a[i]! * b[i + lag]!;
    if (s > bestScore) {
      bestScore = s;
      best = lag;
    }
  }
  return best;
}

function encodeFrames(codec: OpusCodec, pcm: Int16Array): Uint8Array[] {
  const frame = codec.frameSamples * codec.channels;
  const packets: Uint8Array[] = [];
  for (let o = 0; o + frame <= pcm.length; o += frame) packets.push(codec.encode(pcm.subarray(o, o + frame)));
  return packets;
}

function ffmpegDecode(file: string, rate: number, channels: number): Int16Array {
  return s16le(
    run("ffmpeg", [...QUIET, "-i", file, "-f", "s16le", "-ac", String(channels), "-ar", String(rate), "-"]),
  );
}

function ffmpegOpus(lavfi: string, extra: string[] = []): Uint8Array {
  return run("ffmpeg", [...QUIET, "-f", "lavfi", "-i", lavfi, "-c:a", "libopus", ...extra, "-f", "ogg", "-"]);
}

describe("Opus TOC", () => {
  it("reads durations and frame counts from packets libopus made", () => {
    for (const [ms, samples48k] of [
      [10, 480],
      [20, 960],
      [40, 1920],
      [60, 2880],
    ] as const) {
      const codec = new OpusCodec(48000, 1);
      const packet = codec.encode(tone(300, 48000, (48000 * ms) / 1000));
      expect(opusPacketSamples48k(packet)).toBe(samples48k);
      expect(opusPacketIsStereo(packet)).toBe(false);
    }
    const stereo = new OpusCodec(48000, 2).encode(stereoTones(300, 500, 48000, 960));
    expect(opusPacketIsStereo(stereo)).toBe(true);
  });

  it("handles the four frame-count codes", () => {
    const config20msCelt = 31 << 3; // CELT fullband 20 ms
    expect(opusFrameCount(Uint8Array.of(config20msCelt | 0))).toBe(1);
    expect(opusFrameCount(Uint8Array.of(config20msCelt | 1))).toBe(2);
    expect(opusFrameCount(Uint8Array.of(config20msCelt | 2, 1))).toBe(2);
    expect(opusFrameCount(Uint8Array.of(config20msCelt | 3, 5))).toBe(5);
    expect(opusPacketSamples48k(Uint8Array.of((16 << 3) | 3, 0x80 | 3))).toBe(360); // 3 × 2.5 ms
    expect(() => opusPacketSamples48k(new Uint8Array(0))).toThrow(RangeError);
  });
});

describe("OpusHead / OpusTags", () => {
  it("round-trip and match what ffmpeg writes", () => {
    const head = parseOpusHead(
      buildOpusHead({ channels: 2, preSkip: 3840, inputSampleRate: 16000, outputGain: -256 }),
    );
    expect(head).toMatchObject({ channels: 2, preSkip: 3840, inputSampleRate: 16000, outputGain: -256 });
    const tags = parseOpusTags(buildOpusTags({ vendor: "vé", comments: ["TITLE=ß", "A=b=c"] }));
    expect(tags).toEqual({ vendor: "vé", comments: ["TITLE=ß", "A=b=c"] });

    const file = readOggOpus(ffmpegOpus("sine=frequency=440:duration=0.2:sample_rate=48000", ["-ac", "2"]));
    expect(file.head.channels).toBe(2);
    expect(file.head.preSkip).toBe(312);
    expect(file.head.mappingFamily).toBe(0);
    expect(file.tags.vendor).toMatch(/^Lavf/);
    expect(file.tags.comments.some((c) => c.startsWith("encoder="))).toBe(true);
  });

  it("rejects other packets and unknown major versions", () => {
    expect(() => parseOpusHead(buildOpusTags({ vendor: "x", comments: [] }))).toThrow();
    const v2 = buildOpusHead({ channels: 1 });
    v2[8] = 0x10;
    expect(() => parseOpusHead(v2)).toThrow(/version/);
    const truncated = buildOpusTags({ vendor: "abc", comments: ["K=v"] }).subarray(0, 20);
    expect(() => parseOpusTags(truncated)).toThrow(/truncated/);
  });
});

describe("OpusCodec", () => {
  it("encodes and decodes a tone at every rate, keeping its frequency", () => {
    for (const rate of [48000, 24000, 16000, 8000] as const) {
      const codec = new OpusCodec(rate, 1);
      const input = tone(440, rate, rate); // 1 s
      const decoded = encodeFrames(codec, input).map((p) => codec.decode(p));
      const out = Int16Array.from(decoded.flatMap((d) => Array.from(d)));
      expect(out.length).toBe(rate);
      expectFrequency(out, rate, 440);
    }
  });

  it("decodes Discord-style 48 kHz stereo packets straight to 16 kHz mono", () => {
    const enc = new OpusCodec(48000, 2);
    const packets = encodeFrames(enc, stereoTones(500, 500, 48000, 48000));
    const dec = new OpusCodec(16000, 1);
    const frames = packets.map((p) => dec.decode(p));
    expect(frames.every((f) => f.length === 320)).toBe(true);
    const mono = Int16Array.from(frames.flatMap((f) => Array.from(f)));
    expectFrequency(mono, 16000, 500);
  });

  it("conceals a lost packet by continuing the tone, then fades", () => {
    const enc = new OpusCodec(48000, 1);
    const dec = new OpusCodec(16000, 1);
    const packets = encodeFrames(enc, tone(440, 48000, 48000 / 2));
    const heard = packets.map((p) => dec.decode(p));
    const concealed = dec.conceal(320);
    expect(concealed.length).toBe(320);
    const rms = (x: Int16Array) => Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length);
    expect(rms(concealed)).toBeGreaterThan(rms(heard.at(-1)!) * 0.3);
    expectFrequency(Int16Array.from([...heard.at(-1)!, ...concealed]), 16000, 440);
    // Decoding goes on normally after it.
    expect(dec.decode(packets[0]!).length).toBe(320);
  });

  it("rejects frames of a size Opus cannot code", () => {
    const codec = new OpusCodec(16000, 1);
    expect(() => codec.encode(new Int16Array(300))).toThrow(RangeError);
    expect(() => codec.decode(new Uint8Array(0))).toThrow(RangeError);
    expect(() => new OpusCodec(44100 as 48000, 1)).toThrow(RangeError);
  });
});

describe("OggOpusWriter → ffmpeg", () => {
  it("writes a file ffmpeg decodes to the right length, frequency and alignment (pre-skip)", () => {
    const rate = 48000;
    const input = tone(440, rate, rate, 0.5); // 1 s = 50 packets
    const codec = new OpusCodec(rate, 1);
    const writer = new OggOpusWriter({ channels: 1 });
    const parts = encodeFrames(codec, input).map((p) => writer.write(p));
    parts.push(writer.end());
    const file = join(dir, "mono.ogg");
    writeFileSync(file, Buffer.concat(parts));

    const out = ffmpegDecode(file, rate, 1);
    // The final granule is 50 × 960; the player drops pre-skip samples at the start.
    expect(out.length).toBe(rate - OPUS_ENCODER_PRESKIP);
    expectFrequency(out, rate, 440);
    // With the right pre-skip the output lines up with the input sample for sample.
    expect(Math.abs(bestLag(input, out, 40))).toBeLessThanOrEqual(1);
  });

  it("writes stereo that ffmpeg decodes with each channel's tone intact", () => {
    const codec = new OpusCodec(48000, 2);
    const writer = new OggOpusWriter({ channels: 2, packetsPerPage: 10, comments: ["TITLE=two tones"] });
    const parts = encodeFrames(codec, stereoTones(400, 1000, 48000, 24000)).map((p) => writer.write(p));
    parts.push(writer.end());
    const file = join(dir, "stereo.ogg");
    writeFileSync(file, Buffer.concat(parts));
    const out = ffmpegDecode(file, 48000, 2);
    expect(out.length / 2).toBe(24000 - OPUS_ENCODER_PRESKIP);
    expectFrequency(channel(out, 0, 2), 48000, 400);
    expectFrequency(channel(out, 1, 2), 48000, 1000);
    const probe = new TextDecoder()
      .decode(run("ffprobe", [...QUIET, "-show_entries", "stream=channels:stream_tags", "-of", "flat", file]))
      .toLowerCase();
    expect(probe).toContain("streams.stream.0.channels=2");
    expect(probe).toContain('streams.stream.0.tags.title="two tones"');
  });

  it("puts each header alone on its page and flushes every packet at once for live playback", () => {
    const codec = new OpusCodec(48000, 1);
    const writer = new OggOpusWriter({ channels: 1, serial: 0xabc });
    const reader = new OggOpusReader();
    const packets = encodeFrames(codec, tone(300, 48000, 9600));
    const headers = writer.headers();
    const headerPages = new OggPageParser().push(headers);
    expect(headerPages).toHaveLength(2);
    expect(headerPages.map((p) => p.segments.length)).toEqual([1, 1]);
    expect(headerPages[0]!.bos).toBe(true);
    expect(headerPages.map((p) => p.granulePosition)).toEqual([0n, 0n]);
    expect(reader.push(headers)).toEqual([]);
    expect(reader.head?.channels).toBe(1);
    packets.forEach((p, i) => {
      const got = reader.push(writer.write(p));
      expect(got).toHaveLength(1); // nothing held back
      expect(got[0]!.data).toEqual(p);
      expect(got[0]!.granulePosition).toBe(BigInt((i + 1) * 960));
    });
    const end = reader.push(writer.end());
    expect(end).toEqual([]);
    expect(reader.ended).toBe(true);
  });

  it("carries an OpusTags packet larger than a page (continued pages) that ffprobe reads back", () => {
    const long = "x".repeat(100_000);
    const writer = new OggOpusWriter({ channels: 1, comments: [`COMMENT=${long}`] });
    const codec = new OpusCodec(48000, 1);
    const parts = [writer.headers()];
    for (const p of encodeFrames(codec, tone(300, 48000, 4800))) parts.push(writer.write(p));
    parts.push(writer.end());
    const bytes = Buffer.concat(parts);
    const pages = new OggPageParser().push(bytes);
    expect(pages.filter((p) => p.continued).length).toBeGreaterThanOrEqual(1);
    const file = join(dir, "tags.ogg");
    writeFileSync(file, bytes);
    const probe = new TextDecoder().decode(
      run("ffprobe", [...QUIET, "-show_entries", "stream_tags=comment", "-of", "default=nw=1:nk=1", file]),
    );
    expect(probe.trim()).toBe(long);
    expect(ffmpegDecode(file, 48000, 1).length).toBe(4800 - OPUS_ENCODER_PRESKIP);
  });

  it("trims the end through the final granule position", () => {
    const codec = new OpusCodec(48000, 1);
    const writer = new OggOpusWriter({ channels: 1 });
    const packets = encodeFrames(codec, tone(300, 48000, 9600));
    const parts = packets.slice(0, -1).map((p) => writer.write(p));
    parts.push(writer.end({ lastPacket: packets.at(-1)!, trimEndSamples: 500 }));
    const file = join(dir, "trim.ogg");
    writeFileSync(file, Buffer.concat(parts));
    expect(ffmpegDecode(file, 48000, 1).length).toBe(9600 - OPUS_ENCODER_PRESKIP - 500);
    expect(decodeOggOpus(Buffer.concat(parts), 48000, 1).length).toBe(9600 - OPUS_ENCODER_PRESKIP - 500);
  });
});

describe("ffmpeg → OggOpusReader", () => {
  it("demuxes and decodes what ffmpeg's libopus muxes, streamed in small chunks", () => {
    const ogg = ffmpegOpus("sine=frequency=1000:duration=1:sample_rate=48000", ["-b:a", "64k"]);
    const whole = readOggOpus(ogg);
    expect(whole.packets.length).toBe(51); // 48000 + 312 pre-skip samples → 51 packets of 20 ms
    expect(whole.finalGranulePosition).toBe(48000n + 312n);

    const reader = new OggOpusReader();
    const streamed: Uint8Array[] = [];
    for (let o = 0; o < ogg.length; o += 97)
      streamed.push(...reader.push(ogg.subarray(o, o + 97)).map((p) => p.data));
    expect(streamed).toEqual(whole.packets);
    expect(reader.ended).toBe(true);

    const pcm = decodeOggOpus(ogg, 16000, 1);
    expect(pcm.length).toBe(16000);
    expectFrequency(pcm, 16000, 1000);
    // Same result as ffmpeg's own decoder, sample-aligned.
    const ref = ffmpegDecodeBytes(ogg, 48000);
    const ours48 = decodeOggOpus(ogg, 48000, 1);
    expect(ours48.length).toBe(ref.length);
    expect(Math.abs(bestLag(ref, ours48, 40))).toBe(0);
  });

  it("reads packet durations other than 20 ms and stereo 48 kHz (Discord's format)", () => {
    const ogg = ffmpegOpus("sine=frequency=700:duration=0.6:sample_rate=48000", [
      "-ac",
      "2",
      "-frame_duration",
      "60",
    ]);
    const reader = new OggOpusReader();
    const packets = reader.push(ogg);
    expect(packets.every((p) => p.samples48k === 2880)).toBe(true);
    expect(reader.head?.channels).toBe(2);
    const dec = new OpusCodec(16000, 1);
    const mono = Int16Array.from(packets.flatMap((p) => Array.from(dec.decode(p.data))));
    expectFrequency(mono, 16000, 700);
  });

  it("ignores other streams multiplexed in the same file and packets before the headers", () => {
    const ogg = ffmpegOpus("sine=frequency=600:duration=0.2:sample_rate=48000");
    const expected = readOggOpus(ogg).packets;
    const other = new OggMuxer({ serial: 0x5151 });
    const mixed: Uint8Array[] = [];
    new OggPageParser().push(ogg).forEach((page, i) => {
      mixed.push(encodeOggPage(page));
      mixed.push(other.write(Uint8Array.of(1, 2, 3, i), BigInt(i), { flush: true }));
    });
    const both = Buffer.concat(mixed);
    expect(new OggDemuxer().push(both).length).toBe(expected.length + 2 + mixed.length / 2);
    expect(readOggOpus(both).packets).toEqual(expected);

    // A stream joined mid-way yields nothing until an OpusHead arrives.
    const reader = new OggOpusReader();
    expect(reader.push(ogg.subarray(ogg.length - 300))).toEqual([]);
    expect(reader.push(ogg).map((p) => p.data)).toEqual(expected);
  });
});

function ffmpegDecodeBytes(ogg: Uint8Array, rate: number): Int16Array {
  return s16le(
    run(
      "ffmpeg",
      [...QUIET, "-f", "ogg", "-i", "-", "-f", "s16le", "-ac", "1", "-ar", String(rate), "-"],
      ogg,
    ),
  );
}
