// Base64 text held in a byte array (a WebSocket message) decoded to bytes without making a string
// of it: a TTS audio delta is mostly Base64 audio, several kilobytes of it many times a second per
// call. (The same decoder exists in codecs/base64.ts for the bridges; the API client imports nothing
// outside src/api.)

const DECODE = new Int8Array(256).fill(-1);
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
for (let i = 0; i < 64; i++) DECODE[ALPHABET.charCodeAt(i)] = i;
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
