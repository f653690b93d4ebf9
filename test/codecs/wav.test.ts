import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeWav, parseWav, UNKNOWN_SIZE, wavHeader } from "../../codecs/wav.ts";
import { bytesOf, run, s16le } from "./helpers/run.ts";
import { tone } from "./helpers/tone.ts";

const dir = mkdtempSync(join(tmpdir(), "wav-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What ffmpeg decodes a WAV (given as bytes on stdin) to, as interleaved s16le. */
function ffmpegDecode(wav: Uint8Array): Int16Array {
  return s16le(
    run("ffmpeg", ["-v", "error", "-f", "wav", "-i", "-", "-f", "s16le", "-c:a", "pcm_s16le", "-"], wav),
  );
}

/** What sox decodes a WAV (bytes on stdin) to, as interleaved s16le, without dither. */
function soxDecode(wav: Uint8Array): Int16Array {
  return s16le(run("sox", ["-D", "-t", "wav", "-", "-t", "raw", "-e", "signed", "-b", "16", "-"], wav));
}

function soxInfo(wav: Uint8Array, flag: "-r" | "-c"): number {
  const path = join(dir, `info-${Math.random().toString(36).slice(2)}.wav`);
  writeFileSync(path, wav);
  return Number(new TextDecoder().decode(run("soxi", [flag, path])).trim());
}

const speechish = (rate: number, seconds: number): Int16Array => {
  const a = tone(rate * seconds, rate, 220, 9000);
  const b = tone(rate * seconds, rate, 1330, 5000, 1);
  return a.map((v, i) => v + b[i]!);
};

describe("encodeWav", () => {
  it("writes a mono file that ffmpeg and sox read back sample for sample", () => {
    const pcm = speechish(8000, 0.5);
    const wav = encodeWav(pcm, 8000);
    expect(wav.length).toBe(44 + 2 * pcm.length);
    expect(ffmpegDecode(wav)).toEqual(pcm);
    expect(soxDecode(wav)).toEqual(pcm);
    expect(soxInfo(wav, "-r")).toBe(8000);
  });

  it("writes interleaved stereo that sox sees as 2 channels at 48 kHz", () => {
    const left = tone(4800, 48000, 440, 8000);
    const right = tone(4800, 48000, 660, 8000);
    const pcm = new Int16Array(2 * 4800);
    for (let i = 0; i < 4800; i++) {
      pcm[2 * i] = left[i]!;
      pcm[2 * i + 1] = right[i]!;
    }
    const wav = encodeWav(pcm, 48000, 2);
    expect(soxInfo(wav, "-c")).toBe(2);
    expect(soxInfo(wav, "-r")).toBe(48000);
    expect(soxDecode(wav)).toEqual(pcm);
    expect(() => encodeWav(new Int16Array(3), 8000, 2)).toThrow(/not a whole number of 2-channel frames/);
  });

  it("round-trips through parseWav", () => {
    const pcm = speechish(16000, 0.2);
    const parsed = parseWav(encodeWav(pcm, 16000));
    expect(parsed).toMatchObject({
      sampleRate: 16000,
      channels: 1,
      bitsPerSample: 16,
      format: "pcm",
      dataOffset: 44,
    });
    expect(parsed.dataBytes).toBe(pcm.byteLength);
    expect(parsed.samples).toEqual(pcm);
  });
});

describe("wavHeader", () => {
  it("streams: one header with unknown sizes, then raw chunks, read by ffmpeg and sox from a pipe", () => {
    const pcm = speechish(24000, 0.4);
    const header = wavHeader(24000, 1, 16);
    const view = new DataView(header.buffer);
    expect(view.getUint32(4, true)).toBe(UNKNOWN_SIZE);
    expect(view.getUint32(40, true)).toBe(UNKNOWN_SIZE);
    // Header once, then the audio in 20 ms chunks, exactly as a streaming response body.
    const parts = [header];
    for (let i = 0; i < pcm.length; i += 480) parts.push(bytesOf(pcm.subarray(i, i + 480)));
    const stream = Buffer.concat(parts);
    expect(ffmpegDecode(stream)).toEqual(pcm);
    expect(soxDecode(stream)).toEqual(pcm);
    expect(parseWav(stream).samples).toEqual(pcm);
  });

  it("with a known size equals the header encodeWav writes", () => {
    const pcm = new Int16Array(100);
    expect(wavHeader(8000, 1, 16, 200)).toEqual(encodeWav(pcm, 8000).subarray(0, 44));
  });

  it("refuses what a WAV header cannot say", () => {
    expect(() => wavHeader(8000, 1, 12)).toThrow(/8, 16, 24 or 32 bits/);
    expect(() => wavHeader(8000, 0, 16)).toThrow(/channels/);
    expect(() => wavHeader(0, 1, 16)).toThrow(/sample rate/);
    expect(() => wavHeader(8000, 1, 16, 2 ** 32)).toThrow(/does not fit/);
  });
});

describe("parseWav reads what other tools write", () => {
  const source = speechish(8000, 0.25);
  const sourceWav = encodeWav(source, 8000);
  // A near-full-scale sweep synthesised at the target depth, so 24-bit, 32-bit and float files
  // carry detail below 16 bits and rounding conventions are exercised.
  const soxWrite = (args: string[]): Uint8Array =>
    run("sox", [
      "-D",
      "-n",
      "-r",
      "8000",
      ...args,
      "-t",
      "wav",
      "-",
      "synth",
      "0.25",
      "sine",
      "200-3900",
      "gain",
      "-0.05",
    ]);

  it.each([
    { name: "16-bit", args: ["-b", "16"], format: "pcm", bits: 16 },
    { name: "8-bit unsigned", args: ["-b", "8", "-e", "unsigned"], format: "pcm", bits: 8 },
    { name: "24-bit", args: ["-b", "24"], format: "pcm", bits: 24 },
    { name: "32-bit integer", args: ["-b", "32", "-e", "signed"], format: "pcm", bits: 32 },
    { name: "32-bit float", args: ["-b", "32", "-e", "floating-point"], format: "float", bits: 32 },
    { name: "64-bit float", args: ["-b", "64", "-e", "floating-point"], format: "float", bits: 64 },
    { name: "µ-law", args: ["-e", "mu-law"], format: "mulaw", bits: 8 },
    { name: "A-law", args: ["-e", "a-law"], format: "alaw", bits: 8 },
    { name: "stereo 16-bit", args: ["-c", "2", "-b", "16"], format: "pcm", bits: 16 },
  ])("sox $name (piped: overstated data size)", ({ args, format, bits }) => {
    const wav = soxWrite(args);
    const parsed = parseWav(wav);
    expect(parsed).toMatchObject({ sampleRate: 8000, format, bitsPerSample: bits });
    expect(parsed.channels).toBe(args.includes("-c") ? 2 : 1);
    expect(parsed.dataOffset + parsed.dataBytes).toBe(wav.length);
    // sox's own decode of the same bytes is the reference.
    expect(parsed.samples).toEqual(soxDecode(wav));
  });

  it("sox writes >16-bit files as WAVE_FORMAT_EXTENSIBLE with a fact chunk, which parse handles", () => {
    const path = join(dir, "s24.wav");
    run("sox", ["-D", "-t", "wav", "-", "-b", "24", path], sourceWav);
    const wav = new Uint8Array(readFileSync(path));
    expect(new DataView(wav.buffer, wav.byteOffset).getUint16(20, true)).toBe(0xfffe);
    expect(new TextDecoder().decode(wav.subarray(0, 100))).toContain("fact");
    const parsed = parseWav(wav);
    expect(parsed.samples).toEqual(source);
    expect(parsed.dataOffset + parsed.dataBytes).toBe(wav.length);
  });

  it.each([
    { codec: "pcm_s16le", format: "pcm" },
    { codec: "pcm_f32le", format: "float" },
    { codec: "pcm_s24le", format: "pcm" },
    { codec: "pcm_mulaw", format: "mulaw" },
  ])("ffmpeg $codec piped (LIST chunk, unknown sizes)", ({ codec, format }) => {
    const wav = run(
      "ffmpeg",
      ["-v", "error", "-f", "wav", "-i", "-", "-c:a", codec, "-f", "wav", "-"],
      sourceWav,
    );
    expect(new TextDecoder().decode(wav.subarray(0, 120))).toContain("LIST");
    const parsed = parseWav(wav);
    expect(parsed.format).toBe(format);
    expect(parsed.samples).toEqual(ffmpegDecode(wav));
    if (format !== "mulaw") expect(parsed.samples).toEqual(source);
  });

  it("espeak-ng -w (22050 Hz mono speech)", () => {
    const path = join(dir, "espeak.wav");
    run("espeak-ng", ["-w", path, "Hello, this is a test."]);
    const wav = new Uint8Array(readFileSync(path));
    const parsed = parseWav(wav);
    expect(parsed).toMatchObject({ sampleRate: 22050, channels: 1, bitsPerSample: 16, format: "pcm" });
    expect(parsed.samples.length).toBeGreaterThan(22050 / 2);
    expect(parsed.samples).toEqual(soxDecode(wav));
  });
});

describe("parseWav on hand-built files", () => {
  function riff(chunks: [string, Uint8Array][], riffSize?: number): Uint8Array {
    const parts: Uint8Array[] = [];
    for (const [id, body] of chunks) {
      const head = new Uint8Array(8);
      const v = new DataView(head.buffer);
      for (let i = 0; i < 4; i++) head[i] = id.charCodeAt(i);
      v.setUint32(4, body.length, true);
      parts.push(head, body);
      if (body.length % 2) parts.push(new Uint8Array(1));
    }
    const total = parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(12 + total);
    out.set([..."RIFF"].map((c) => c.charCodeAt(0)));
    new DataView(out.buffer).setUint32(4, riffSize ?? 4 + total, true);
    out.set(
      [..."WAVE"].map((c) => c.charCodeAt(0)),
      8,
    );
    let at = 12;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
  const fmt16 = encodeWav(new Int16Array(0), 8000).subarray(20, 36);
  const pcm = new Int16Array([1, -2, 300, -32768, 32767]);

  it("skips unknown chunks of odd size with their pad byte", () => {
    const wav = riff([
      ["junk", new Uint8Array([1, 2, 3])],
      ["fmt ", fmt16],
      ["LIST", new Uint8Array(7)],
      ["data", bytesOf(pcm)],
    ]);
    const parsed = parseWav(wav);
    expect(parsed.samples).toEqual(pcm);
    expect(parsed.dataOffset).toBe(wav.length - 10);
  });

  it("drops a trailing partial frame of a cut-off stream", () => {
    const wav = riff([
      ["fmt ", fmt16],
      ["data", bytesOf(pcm)],
    ]);
    const parsed = parseWav(wav.subarray(0, wav.length - 1));
    expect(parsed.samples).toEqual(pcm.subarray(0, 4));
    expect(parsed.dataBytes).toBe(8);
  });

  it("names what is wrong", () => {
    const adpcm = new Uint8Array(fmt16);
    adpcm[0] = 2;
    const bits12 = new Uint8Array(fmt16);
    bits12[14] = 12;
    const align = new Uint8Array(fmt16);
    align[12] = 4;
    const cases: [Uint8Array, RegExp][] = [
      [new Uint8Array(4), /too short/],
      [new TextEncoder().encode("OggS0000WAVE"), /not a RIFF file \(starts with "OggS"\)/],
      [new TextEncoder().encode("RIFF0000AVI "), /type "AVI ", not WAVE/],
      [new TextEncoder().encode("RF640000WAVE"), /RF64/],
      [riff([["data", bytesOf(pcm)]]), /data chunk comes before any fmt chunk/],
      [riff([["fmt ", fmt16]]), /no data chunk/],
      [riff([["LIST", new Uint8Array(4)]]), /no fmt chunk/],
      [riff([["fmt ", fmt16.subarray(0, 14)]]), /fmt chunk is 14 bytes/],
      [
        riff([
          ["fmt ", adpcm],
          ["data", new Uint8Array(4)],
        ]),
        /format tag 0x0002 \(Microsoft ADPCM\) is not supported/,
      ],
      [
        riff([
          ["fmt ", bits12],
          ["data", new Uint8Array(4)],
        ]),
        /12-bit pcm is not supported/,
      ],
      [
        riff([
          ["fmt ", align],
          ["data", new Uint8Array(4)],
        ]),
        /block align 4 does not match 1 channels of 16 bits/,
      ],
    ];
    for (const [bytes, message] of cases) expect(() => parseWav(bytes), String(message)).toThrow(message);
  });

  it("refuses ffmpeg's ADPCM output by name", () => {
    const wav = run(
      "ffmpeg",
      ["-v", "error", "-f", "wav", "-i", "-", "-c:a", "adpcm_ms", "-f", "wav", "-"],
      encodeWav(tone(8000, 8000, 440, 8000), 8000),
    );
    expect(() => parseWav(wav)).toThrow(/0x0002 \(Microsoft ADPCM\)/);
  });
});
