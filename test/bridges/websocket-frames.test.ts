import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { FrameReader, type FrameSink } from "../../bridges/websocket-frames.ts";

type Seen =
  | { message: string; binary: boolean }
  | { ping: string }
  | { close: number; reason: string }
  | { fail: number };

function reader(maxPayload = 1 << 20): { r: FrameReader; seen: Seen[] } {
  const seen: Seen[] = [];
  const sink: FrameSink = {
    // Copied: the views are only valid during the call.
    message: (d, binary) => seen.push({ message: Buffer.from(d).toString("latin1"), binary }),
    ping: (d) => seen.push({ ping: d.toString("latin1") }),
    close: (code, reason) => seen.push({ close: code, reason: reason.toString() }),
    fail: (code) => seen.push({ fail: code }),
  };
  return { r: new FrameReader(sink, maxPayload), seen };
}

/** A client frame: masked with a fixed key, with the length in the shortest form unless `form` says. */
function frame(
  op: number,
  payload: Buffer | string,
  o: { fin?: boolean; rsv?: number; masked?: boolean; form?: 7 | 16 | 64 } = {},
): Buffer {
  const data = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  const n = data.length;
  const form = o.form ?? (n < 126 ? 7 : n < 65536 ? 16 : 64);
  const head = [((o.fin ?? true) ? 0x80 : 0) | (o.rsv ?? 0) | op];
  const m = o.masked === false ? 0 : 0x80;
  if (form === 7) head.push(m | n);
  else if (form === 16) head.push(m | 126, n >> 8, n & 0xff);
  else head.push(m | 127, 0, 0, 0, 0, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
  if (o.masked === false) return Buffer.concat([Buffer.from(head), data]);
  const key = [0x37, 0xfa, 0x21, 0x3d];
  const masked = Buffer.from(data.map((b, i) => b ^ key[i % 4]!));
  return Buffer.concat([Buffer.from(head), Buffer.from(key), masked]);
}

function closePayload(code: number, reason = ""): Buffer {
  const b = Buffer.alloc(2 + Buffer.byteLength(reason));
  b.writeUInt16BE(code, 0);
  b.write(reason, 2);
  return b;
}

describe("FrameReader", () => {
  const stream = Buffer.concat([
    frame(1, '{"event":"media","media":{"payload":"AAEC"}}'),
    frame(2, Buffer.from([1, 2, 3, 4, 5, 6, 7])),
    frame(9, "are you there"),
    frame(1, "frag", { fin: false }),
    frame(9, "between fragments"),
    frame(0, "mented ", { fin: false }),
    frame(0, "ünïcode"),
    frame(1, "x".repeat(300)), // 16-bit length
    frame(2, Buffer.alloc(70_000, 7)), // 64-bit length
    frame(1, "long form", { form: 64 }),
    frame(10, "pong ignored"),
    frame(8, closePayload(1000, "bye")),
  ]);
  const expected: Seen[] = [
    { message: '{"event":"media","media":{"payload":"AAEC"}}', binary: false },
    { message: Buffer.from([1, 2, 3, 4, 5, 6, 7]).toString("latin1"), binary: true },
    { ping: "are you there" },
    { ping: "between fragments" },
    { message: Buffer.from("fragmented ünïcode").toString("latin1"), binary: false },
    { message: "x".repeat(300), binary: false },
    { message: Buffer.alloc(70_000, 7).toString("latin1"), binary: true },
    { message: "long form", binary: false },
    { close: 1000, reason: "bye" },
  ];

  it("reads every kind of frame from one chunk", () => {
    const { r, seen } = reader();
    r.push(Buffer.from(stream));
    expect(seen).toEqual(expected);
  });

  it("reads the same whatever the chunk boundaries (cut at every byte of the small frames)", () => {
    // Every cut point in the first 600 bytes (headers, masks and payloads of the small frames),
    // then the rest in pieces of 997 bytes (the 70,000-byte frame across many chunks).
    for (let cut = 1; cut < 600; cut++) {
      const { r, seen } = reader();
      r.push(Buffer.from(stream.subarray(0, cut)));
      for (let at = cut; at < stream.length; at += 997)
        r.push(Buffer.from(stream.subarray(at, Math.min(stream.length, at + 997))));
      expect(seen, `cut at ${cut}`).toEqual(expected);
    }
  });

  it("reads one byte at a time", () => {
    const { r, seen } = reader();
    for (let i = 0; i < stream.length; i++) r.push(Buffer.from(stream.subarray(i, i + 1)));
    expect(seen).toEqual(expected);
  });

  it("reads nothing after a close frame", () => {
    const { r, seen } = reader();
    r.push(Buffer.concat([frame(8, Buffer.alloc(0)), frame(1, "late")]));
    expect(seen).toEqual([{ close: 1005, reason: "" }]);
  });

  const violations: [string, Buffer, number][] = [
    ["an unmasked frame", frame(1, "hi", { masked: false }), 1002],
    ["RSV bits", frame(1, "hi", { rsv: 0x40 }), 1002],
    ["an unknown data opcode", frame(3, "hi"), 1002],
    ["an unknown control opcode", frame(0xb, "hi"), 1002],
    ["a fragmented control frame", frame(9, "hi", { fin: false }), 1002],
    ["a control frame over 125 bytes", frame(9, "p".repeat(126)), 1002],
    ["a continuation with nothing to continue", frame(0, "hi"), 1002],
    [
      "a new message inside a fragmented one",
      Buffer.concat([frame(1, "a", { fin: false }), frame(1, "b")]),
      1002,
    ],
    ["text that is not UTF-8", frame(1, Buffer.from([0x68, 0xc3, 0x28])), 1007],
    ["a close frame of 1 byte", frame(8, Buffer.from([3])), 1002],
    ["a close code no peer may send", frame(8, closePayload(1006)), 1002],
    [
      "a close reason that is not UTF-8",
      frame(8, Buffer.concat([closePayload(1000), Buffer.from([0xff])])),
      1007,
    ],
    ["a message over the limit", frame(2, Buffer.alloc(101)), 1009],
    [
      "fragments over the limit together",
      Buffer.concat([frame(2, Buffer.alloc(60), { fin: false }), frame(0, Buffer.alloc(60))]),
      1009,
    ],
  ];
  for (const [what, bytes, code] of violations)
    it(`fails with ${code} on ${what}, and reads no further`, () => {
      const { r, seen } = reader(100);
      r.push(Buffer.concat([bytes, frame(1, "after")]));
      r.push(frame(1, "later"));
      expect(seen).toEqual([{ fail: code }]);
    });

  it("refuses an oversized frame from its header, before its payload arrives", () => {
    const { r, seen } = reader(1000);
    r.push(frame(2, Buffer.alloc(5000)).subarray(0, 8));
    expect(seen).toEqual([{ fail: 1009 }]);
  });
});
