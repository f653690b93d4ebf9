import { describe, expect, it } from "vitest";
import { readSse, SseDecoder, type SseEvent, SseTruncatedError } from "../../src/api/sse.ts";
// A seeded PRNG, so a failing case can be replayed from its seed.
import { seededRandom as rng } from "../helpers/noise.ts";

const WORDS = ["hello", "wörld", "日本語", "🎙️", '{"a":1}', "[DONE]", "x:y", " lead", "", "data: inner"];

function randomEvents(r: () => number): SseEvent[] {
  const n = 1 + Math.floor(r() * 8);
  const evs: SseEvent[] = [];
  for (let k = 0; k < n; k++) {
    const lines = 1 + Math.floor(r() * 3);
    const data: string[] = [];
    for (let j = 0; j < lines; j++) data.push(WORDS[Math.floor(r() * WORDS.length)]!);
    const ev: SseEvent = { event: r() < 0.5 ? "message" : `ev.${k}`, data: data.join("\n") };
    evs.push(ev);
  }
  return evs;
}

function serialize(evs: SseEvent[], r: () => number): string {
  // A lone CR followed by a lone LF would read as one CRLF line end, so never emit that pair.
  let last = "";
  const eol = () => {
    const e = ["\n", "\r", "\r\n"][Math.floor(r() * 3)]!;
    last = last === "\r" && e === "\n" ? "\r\n" : e;
    return last;
  };
  let s = r() < 0.2 ? "\ufeff" : "";
  for (const ev of evs) {
    if (r() < 0.3) s += `: keep-alive${eol()}`;
    if (ev.event !== "message" || r() < 0.2) s += `event: ${ev.event}${eol()}`;
    if (r() < 0.2) s += `unknownfield: zzz${eol()}`;
    for (const line of ev.data.split("\n"))
      s += (r() < 0.3 && !line.startsWith(" ") ? `data:${line}` : `data: ${line}`) + eol();
    s += eol();
  }
  return s;
}

function splitBytes(bytes: Uint8Array, r: () => number): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let i = 0;
  while (i < bytes.length) {
    const len = r() < 0.3 ? 1 : 1 + Math.floor(r() * 12);
    parts.push(bytes.subarray(i, i + len));
    i += len;
  }
  return parts;
}

describe("SseDecoder", () => {
  it("decodes fields, comments, multi-line data and defaults the event name", () => {
    const d = new SseDecoder();
    const evs = d.push(": hi\nevent: a\ndata: 1\ndata:2\nid: 7\nretry: 1500\n\ndata\n\n");
    expect(evs).toEqual([
      { event: "a", data: "1\n2", id: "7", retry: 1500 },
      { event: "message", data: "", id: "7" },
    ]);
    expect(d.end().truncated).toBe(false);
  });

  it("does not dispatch events without data, and resets the event name after each event", () => {
    const d = new SseDecoder();
    expect(d.push("event: lonely\n\ndata: x\n\n")).toEqual([{ event: "message", data: "x" }]);
  });

  it("treats a CR ending one chunk and LF starting the next as one line end", () => {
    const d = new SseDecoder();
    expect(d.push("data: a\r")).toEqual([]);
    // "\r" alone is a line end too: the blank line dispatches, and the LF after it is its pair.
    expect(d.push("\n\r")).toEqual([{ event: "message", data: "a" }]);
    expect(d.push("\n")).toEqual([]);
    // A CRLF fully inside one chunk, then a bare LF in the next, is two line ends.
    expect(d.push("data: b\r\n")).toEqual([]);
    expect(d.push("\n")).toEqual([{ event: "message", data: "b" }]);
  });

  it("reports a stream cut inside an event", () => {
    const d = new SseDecoder();
    expect(d.push('data: {"a":')).toEqual([]);
    expect(d.end().truncated).toBe(true);
    const e = new SseDecoder();
    e.push("data: complete line\n");
    expect(e.end().truncated).toBe(true);
  });

  it("fuzz: any chunking of any serialization yields the same events", () => {
    const enc = new TextEncoder();
    for (let seed = 1; seed <= 400; seed++) {
      const r = rng(seed);
      const evs = randomEvents(r);
      const bytes = enc.encode(serialize(evs, r));
      const d = new SseDecoder();
      const got: SseEvent[] = [];
      for (const part of splitBytes(bytes, r)) got.push(...d.push(part));
      expect({ seed, got }).toEqual({ seed, got: evs });
      expect(d.end().truncated).toBe(false);
    }
  });

  it("readSse yields complete events, then throws when the stream is cut mid-event", async () => {
    async function* body() {
      yield new TextEncoder().encode("data: one\n\ndata: tw");
    }
    const seen: string[] = [];
    await expect(
      (async () => {
        for await (const ev of readSse(body())) seen.push(ev.data);
      })(),
    ).rejects.toBeInstanceOf(SseTruncatedError);
    expect(seen).toEqual(["one"]);
  });
});
