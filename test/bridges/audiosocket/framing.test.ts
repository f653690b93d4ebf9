import { describe, expect, it } from "vitest";
import {
  audioKind,
  audioRate,
  encodeFrame,
  FrameParser,
  formatUuid,
  HANGUP_FRAME,
  KIND_AUDIO,
  KIND_DTMF,
  KIND_ERROR,
  KIND_UUID,
  maxPayload,
  parseUuid,
  type SkipReason,
} from "../../../bridges/audiosocket/framing.ts";

interface Got {
  frames: { kind: number; payload: number[] }[];
  skipped: { kind: number; length: number; reason: SkipReason }[];
}

function parserInto(): { parser: FrameParser; got: Got } {
  const got: Got = { frames: [], skipped: [] };
  const parser = new FrameParser({
    frame: (kind, bytes, start, end) => got.frames.push({ kind, payload: [...bytes.subarray(start, end)] }),
    skipped: (kind, length, reason) => got.skipped.push({ kind, length, reason }),
  });
  return { parser, got };
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const UUID = "40325ec2-5efd-4bd3-805f-53576e581d13";
const audio = new Uint8Array(320).map((_, i) => (i * 7) & 0xff);
const stream = concat([
  encodeFrame(KIND_UUID, parseUuid(UUID)),
  encodeFrame(KIND_AUDIO, audio),
  encodeFrame(KIND_DTMF, new Uint8Array([0x35])),
  encodeFrame(KIND_ERROR, new Uint8Array([0x02])),
  encodeFrame(0x12, audio.subarray(0, 11)),
  HANGUP_FRAME,
]);
const expected: Got["frames"] = [
  { kind: KIND_UUID, payload: [...parseUuid(UUID)] },
  { kind: KIND_AUDIO, payload: [...audio] },
  { kind: KIND_DTMF, payload: [0x35] },
  { kind: KIND_ERROR, payload: [0x02] },
  { kind: 0x12, payload: [...audio.subarray(0, 11)] },
  { kind: 0x00, payload: [] },
];

describe("AudioSocket framing", () => {
  it("maps the audio kinds to the rates of res_audiosocket.h", () => {
    const rates = [8000, 12000, 16000, 24000, 32000, 44100, 48000, 96000, 192000];
    rates.forEach((rate, i) => {
      expect(audioRate(0x10 + i)).toBe(rate);
      expect(audioKind(rate)).toBe(0x10 + i);
    });
    expect(audioRate(0x19)).toBeUndefined();
    expect(audioRate(KIND_UUID)).toBeUndefined();
    expect(() => audioKind(22050)).toThrow(/no audio kind for 22050 Hz/);
  });

  it("writes the header as kind, big-endian length, payload", () => {
    expect([...HANGUP_FRAME]).toEqual([0, 0, 0]);
    expect([...encodeFrame(KIND_AUDIO, new Uint8Array(0x1234)).subarray(0, 3)]).toEqual([0x10, 0x12, 0x34]);
  });

  it("formats and parses UUIDs 8-4-4-4-12", () => {
    const bytes = parseUuid(UUID);
    expect(bytes.length).toBe(16);
    expect(formatUuid(bytes, 0)).toBe(UUID);
    expect(formatUuid(concat([new Uint8Array(3), bytes]), 3)).toBe(UUID);
    expect(() => parseUuid("not-a-uuid")).toThrow(/not a UUID/);
  });

  it("parses several frames in one chunk", () => {
    const { parser, got } = parserInto();
    parser.push(stream);
    expect(got.frames).toEqual(expected);
    expect(got.skipped).toEqual([]);
    expect(parser.atBoundary).toBe(true);
  });

  it("parses the same stream split at every byte position, and byte by byte", () => {
    for (let cut = 1; cut < stream.length; cut++) {
      const { parser, got } = parserInto();
      parser.push(stream.subarray(0, cut));
      parser.push(stream.subarray(cut));
      expect(got.frames, `cut at ${cut}`).toEqual(expected);
    }
    const { parser, got } = parserInto();
    for (let i = 0; i < stream.length; i++) parser.push(stream.subarray(i, i + 1));
    expect(got.frames).toEqual(expected);
  });

  it("reports a half frame at the end as not at a boundary", () => {
    const { parser, got } = parserInto();
    parser.push(stream.subarray(0, 19 + 3 + 100));
    expect(got.frames.length).toBe(1);
    expect(parser.atBoundary).toBe(false);
    const header = parserInto();
    header.parser.push(new Uint8Array([0x10, 0x01]));
    expect(header.parser.atBoundary).toBe(false);
  });

  it("skips unknown kinds and impossible lengths by their length, and stays in step", () => {
    const { parser, got } = parserInto();
    const junk = concat([
      encodeFrame(0x42, new Uint8Array(5000).fill(0x10)),
      encodeFrame(KIND_UUID, new Uint8Array(15)),
      encodeFrame(KIND_DTMF, new Uint8Array(0)),
      encodeFrame(KIND_AUDIO, new Uint8Array(0)),
      encodeFrame(KIND_AUDIO, new Uint8Array(maxPayload(KIND_AUDIO) + 2)),
      encodeFrame(KIND_ERROR, new Uint8Array(60000)),
      stream,
    ]);
    for (let i = 0; i < junk.length; i += 777) parser.push(junk.subarray(i, i + 777));
    expect(got.skipped).toEqual([
      { kind: 0x42, length: 5000, reason: "unknown-kind" },
      { kind: KIND_UUID, length: 15, reason: "bad-length" },
      { kind: KIND_DTMF, length: 0, reason: "bad-length" },
      { kind: KIND_AUDIO, length: 0, reason: "bad-length" },
      { kind: KIND_AUDIO, length: maxPayload(KIND_AUDIO) + 2, reason: "oversized" },
      { kind: KIND_ERROR, length: 60000, reason: "oversized" },
    ]);
    expect(got.frames).toEqual(expected);
  });

  it("accepts audio up to 250 ms of its kind's rate", () => {
    expect(maxPayload(KIND_AUDIO)).toBe(4000);
    expect(maxPayload(0x12)).toBe(8000);
    // 250 ms at 192 kHz exceeds what a u16 length can say: any length is accepted there.
    expect(maxPayload(0x18)).toBe(96000);
    expect(maxPayload(0x77)).toBe(-1);
  });

  it("delivers nothing after stop()", () => {
    const { parser, got } = parserInto();
    parser.stop();
    parser.push(stream);
    expect(got.frames).toEqual([]);
  });
});
