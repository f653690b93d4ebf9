// Base64 between byte arrays, with no string in between: a TTS audio delta is mostly Base64 audio
// (several kilobytes many times a second per call) and a streamed ASR body is written as Base64 as
// the caller speaks. (codecs/base64.ts does the same for the bridges; the API client imports nothing
// outside src/api.)

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ENCODE = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DECODE = new Int8Array(256).fill(-1);
for (let i = 0; i < 64; i++) DECODE[ENCODE[i]!] = i;
DECODE[45] = 62; // - (base64url, as Node reads it)
DECODE[95] = 63; // _
const PAD = 61;

/**
 * The bytes of the Base64 text `src[start, end)` in a new array, or undefined when the text holds
 * anything but the alphabet and final padding (the caller then uses a lenient decoder).
 */
export function decodeBase64Range(src: Uint8Array, start: number, end: number): Uint8Array | undefined {
  let stop = end;
  if (stop > start && src[stop - 1] === PAD) stop--;
  if (stop > start && src[stop - 1] === PAD) stop--;
  const chars = stop - start;
  if (chars % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((chars * 3) / 4));
  let o = 0;
  let i = start;
  for (const whole = start + (chars & ~3); i < whole; i += 4) {
    const a = DECODE[src[i]!]!;
    const b = DECODE[src[i + 1]!]!;
    const c = DECODE[src[i + 2]!]!;
    const d = DECODE[src[i + 3]!]!;
    if ((a | b | c | d) < 0) return undefined;
    const v = (a << 18) | (b << 12) | (c << 6) | d;
    out[o++] = v >> 16;
    out[o++] = (v >> 8) & 0xff;
    out[o++] = v & 0xff;
  }
  const rest = stop - i;
  if (rest >= 2) {
    const a = DECODE[src[i]!]!;
    const b = DECODE[src[i + 1]!]!;
    const c = rest === 3 ? DECODE[src[i + 2]!]! : 0;
    if ((a | b | c) < 0) return undefined;
    const v = (a << 18) | (b << 12) | (c << 6);
    out[o++] = v >> 16;
    if (rest === 3) out[o++] = (v >> 8) & 0xff;
  }
  return out;
}

/**
 * Writes the Base64 text of `src[start, end)`, a whole number of 3-byte groups (so no padding), into
 * `out` from `at`; returns the characters written ((end - start) / 3 × 4).
 */
export function encodeBase64Groups(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at: number,
): number {
  if ((end - start) % 3 !== 0)
    throw new RangeError("encodeBase64Groups: not a whole number of 3-byte groups");
  let o = at;
  for (let i = start; i < end; i += 3) {
    const v = (src[i]! << 16) | (src[i + 1]! << 8) | src[i + 2]!;
    out[o++] = ENCODE[v >> 18]!;
    out[o++] = ENCODE[(v >> 12) & 63]!;
    out[o++] = ENCODE[(v >> 6) & 63]!;
    out[o++] = ENCODE[v & 63]!;
  }
  return o - at;
}
