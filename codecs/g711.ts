// ITU-T G.711 µ-law and A-law by lookup tables.
//
// The tables are built once at load time from the classic reference algorithm (Sun
// Microsystems' g711.c, the one sox and most telephony stacks use): µ-law codes a 14-bit
// sample, A-law a 13-bit one. A 16-bit sample is first rounded to that width (to nearest,
// half up, clipping at the top), exactly as sox 14.4 does; plain truncation (`>> 2`) would
// bias every decision level by up to one 14-bit step toward -∞. The per-sample hot path is a
// single table load, with no branches: encode indexes a 64 Ki table by the raw 16-bit
// pattern, decode a 256-entry table by the code byte.

const QUANT_MASK = 0x0f;
const SEG_SHIFT = 4;
const SEG_MASK = 0x70;
const SIGN_BIT = 0x80;
const MULAW_BIAS = 0x84;
const MULAW_CLIP = 8159;

/** Upper bound (inclusive) of each of the 8 segments, in the 14-bit biased µ-law domain. */
const MULAW_SEG_END = [0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff, 0x1fff];
/** Upper bound (inclusive) of each of the 8 segments, in the 13-bit A-law domain. */
const ALAW_SEG_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

function segment(value: number, ends: readonly number[]): number {
  for (let s = 0; s < ends.length; s++) if (value <= ends[s]!) return s;
  return ends.length;
}

/** 16-bit sample → `bits`-bit sample, rounded to nearest (half up), clipped at the top. */
function narrow(sample: number, bits: number): number {
  const shift = 16 - bits;
  return Math.min((sample + (1 << (shift - 1))) >> shift, (1 << (bits - 1)) - 1);
}

function mulawOfLinear16(sample: number): number {
  let v = narrow(sample, 14);
  let mask = 0xff;
  if (v < 0) {
    v = -v;
    mask = 0x7f;
  }
  if (v > MULAW_CLIP) v = MULAW_CLIP;
  v += MULAW_BIAS >> 2;
  const seg = segment(v, MULAW_SEG_END);
  if (seg >= 8) return 0x7f ^ mask;
  return ((seg << SEG_SHIFT) | ((v >> (seg + 1)) & QUANT_MASK)) ^ mask;
}

function linear16OfMulaw(code: number): number {
  const u = ~code & 0xff;
  let t = ((u & QUANT_MASK) << 3) + MULAW_BIAS;
  t <<= (u & SEG_MASK) >> SEG_SHIFT;
  return u & SIGN_BIT ? MULAW_BIAS - t : t - MULAW_BIAS;
}

function alawOfLinear16(sample: number): number {
  let v = narrow(sample, 13);
  let mask: number;
  if (v >= 0) {
    mask = 0xd5;
  } else {
    mask = 0x55;
    v = -v - 1;
  }
  const seg = segment(v, ALAW_SEG_END);
  if (seg >= 8) return 0x7f ^ mask;
  const mantissa = seg < 2 ? (v >> 1) & QUANT_MASK : (v >> seg) & QUANT_MASK;
  return ((seg << SEG_SHIFT) | mantissa) ^ mask;
}

function linear16OfAlaw(code: number): number {
  const a = code ^ 0x55;
  let t = (a & QUANT_MASK) << 4;
  const seg = (a & SEG_MASK) >> SEG_SHIFT;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & SIGN_BIT ? t : -t;
}

function encodeTable(encode: (sample: number) => number): Uint8Array {
  // Indexed by the sample's 16-bit two's-complement pattern (sample & 0xffff).
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encode((i << 16) >> 16);
  return table;
}

function decodeTable(decode: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = decode(c);
  return table;
}

const MULAW_ENCODE = encodeTable(mulawOfLinear16);
const MULAW_DECODE = decodeTable(linear16OfMulaw);
const ALAW_ENCODE = encodeTable(alawOfLinear16);
const ALAW_DECODE = decodeTable(linear16OfAlaw);

function checkOut(out: { length: number } | undefined, needed: number): void {
  if (out !== undefined && out.length < needed) {
    throw new RangeError(`g711: output buffer holds ${out.length} samples, ${needed} needed`);
  }
}

function encodeWith(table: Uint8Array, pcm: Int16Array, out: Uint8Array | undefined): Uint8Array {
  checkOut(out, pcm.length);
  const n = pcm.length;
  const dst = out ? (out.length === n ? out : out.subarray(0, n)) : new Uint8Array(n);
  for (let i = 0; i < n; i++) dst[i] = table[pcm[i]! & 0xffff]!;
  return dst;
}

function decodeWith(table: Int16Array, bytes: Uint8Array, out: Int16Array | undefined): Int16Array {
  checkOut(out, bytes.length);
  const n = bytes.length;
  const dst = out ? (out.length === n ? out : out.subarray(0, n)) : new Int16Array(n);
  for (let i = 0; i < n; i++) dst[i] = table[bytes[i]!]!;
  return dst;
}

/**
 * 16-bit linear PCM → µ-law bytes. With `out` (at least `pcm.length` long) the result is
 * written there and a view of exactly `pcm.length` bytes is returned.
 */
export function mulawEncode(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(MULAW_ENCODE, pcm, out);
}

/** µ-law bytes → 16-bit linear PCM; `out` as for {@link mulawEncode}. */
export function mulawDecode(bytes: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(MULAW_DECODE, bytes, out);
}

/** 16-bit linear PCM → A-law bytes; `out` as for {@link mulawEncode}. */
export function alawEncode(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  return encodeWith(ALAW_ENCODE, pcm, out);
}

/** A-law bytes → 16-bit linear PCM; `out` as for {@link mulawEncode}. */
export function alawDecode(bytes: Uint8Array, out?: Int16Array): Int16Array {
  return decodeWith(ALAW_DECODE, bytes, out);
}

/** µ-law code of digital silence (what a silent 20 ms frame is filled with). */
export const MULAW_SILENCE = 0xff;
/** A-law code of digital silence. */
export const ALAW_SILENCE = 0xd5;
