import { describe, expect, it } from "vitest";
import {
  ALAW_SILENCE,
  alawDecode,
  alawEncode,
  MULAW_SILENCE,
  mulawDecode,
  mulawEncode,
} from "../../codecs/g711.ts";
import { bytesOf, run, s16le } from "./helpers/run.ts";

// Every 16-bit value once, and every code byte once: the whole input domain.
const allSamples = new Int16Array(65536).map((_, i) => i - 32768);
const allCodes = new Uint8Array(256).map((_, i) => i);

function soxEncode(pcm: Int16Array, encoding: "mu-law" | "a-law"): Uint8Array {
  const raw = ["-t", "raw", "-r", "8000", "-c", "1"];
  return run(
    "sox",
    ["-D", ...raw, "-e", "signed", "-b", "16", "-", ...raw, "-e", encoding, "-b", "8", "-"],
    bytesOf(pcm),
  );
}

function soxDecode(codes: Uint8Array, encoding: "mu-law" | "a-law"): Int16Array {
  const raw = ["-t", "raw", "-r", "8000", "-c", "1"];
  return s16le(
    run(
      "sox",
      ["-D", ...raw, "-e", encoding, "-b", "8", "-", ...raw, "-e", "signed", "-b", "16", "-"],
      codes,
    ),
  );
}

function firstMismatch(a: ArrayLike<number>, b: ArrayLike<number>): string {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return `index ${i}: ${a[i]} vs ${b[i]}`;
  return "none";
}

describe.each([
  { name: "µ-law", sox: "mu-law" as const, encode: mulawEncode, decode: mulawDecode, silence: MULAW_SILENCE },
  { name: "A-law", sox: "a-law" as const, encode: alawEncode, decode: alawDecode, silence: ALAW_SILENCE },
])("G.711 $name", ({ sox, encode, decode, silence }) => {
  it("encodes all 65536 sample values exactly as sox does", () => {
    const ours = encode(allSamples);
    const ref = soxEncode(allSamples, sox);
    expect(firstMismatch(ours, ref)).toBe("none");
  });

  it("decodes all 256 codes exactly as sox does", () => {
    const ours = decode(allCodes);
    const ref = soxDecode(allCodes, sox);
    expect(firstMismatch(ours, ref)).toBe("none");
  });

  it("decoding then re-encoding gives back every code except the duplicate zero", () => {
    const again = encode(decode(allCodes));
    const changed = [...allCodes].filter((c) => again[c] !== c);
    // µ-law has +0 (0xff) and -0 (0x7f); both decode to 0, which encodes as +0. A-law has no -0.
    expect(changed).toEqual(sox === "mu-law" ? [0x7f] : []);
  });

  it("is monotonic: larger samples never get a smaller decoded value", () => {
    const back = decode(encode(allSamples));
    for (let i = 1; i < back.length; i++)
      if (back[i]! < back[i - 1]!) throw new Error(`not monotonic at ${i}`);
  });

  it("exports the code of digital silence", () => {
    expect(encode(new Int16Array([0]))[0]).toBe(silence);
    expect(decode(new Uint8Array([silence]))[0]).toBe(sox === "mu-law" ? 0 : 8);
  });

  it("writes into a caller buffer and returns a view of the right length", () => {
    const outBytes = new Uint8Array(10).fill(0xaa);
    const codes = encode(new Int16Array([0, 1000, -1000]), outBytes);
    expect(codes.length).toBe(3);
    expect(codes.buffer).toBe(outBytes.buffer);
    expect(outBytes[3]).toBe(0xaa);
    const outPcm = new Int16Array(3);
    expect(decode(codes, outPcm)).toBe(outPcm);
    expect(() => decode(codes, new Int16Array(2))).toThrow(/2 samples, 3 needed/);
  });
});
