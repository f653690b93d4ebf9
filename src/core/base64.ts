// Base64 between byte arrays, with no string in between. Media on the call path arrives and leaves
// as Base64 text inside JSON messages (20 ms of µ-law, 50 times a second per call), a TTS audio
// delta is mostly Base64 audio, and a streamed ASR body is written as Base64 as the caller speaks:
// going through a string each time made garbage for every frame. Reads and writes ranges of
// caller-owned arrays, so one buffer per call serves every frame.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const ENCODE = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
/** Byte → 6-bit value; -1 for bytes outside the alphabet. "-" and "_" (base64url) as Node reads them. */
const DECODE = new Int8Array(256).fill(-1);
for (let i = 0; i < 64; i++) DECODE[ENCODE[i]!] = i;
DECODE[45] = 62; // -
DECODE[95] = 63; // _
const PAD = 61; // =

/** Bytes that `src[start, end)` (Base64 text, padded or not) decodes to. */
export function base64DecodedLength(src: Uint8Array, start: number, end: number): number {
  return Math.floor(((unpadded(src, start, end) - start) * 3) / 4);
}

/** End of the text without its final padding (at most two "="). */
function unpadded(src: Uint8Array, start: number, end: number): number {
  let stop = end;
  if (stop > start && src[stop - 1] === PAD) stop--;
  if (stop > start && src[stop - 1] === PAD) stop--;
  return stop;
}

/**
 * Decodes the Base64 text `src[start, end)` into `out` from `at`; returns the bytes written, or -1
 * (having written nothing meaningful) when the text holds anything but the alphabet and final
 * padding, so the caller can hand such text to a lenient decoder. `out` must hold
 * base64DecodedLength() bytes from `at`.
 */
export function decodeBase64Into(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at = 0,
): number {
  const stop = unpadded(src, start, end);
  const length = Math.floor(((stop - start) * 3) / 4);
  if ((stop - start) % 4 === 1 || out.length - at < length) return -1;
  let o = at;
  let i = start;
  const whole = start + ((stop - start) & ~3);
  for (; i < whole; i += 4) {
    const a = DECODE[src[i]!]!;
    const b = DECODE[src[i + 1]!]!;
    const c = DECODE[src[i + 2]!]!;
    const d = DECODE[src[i + 3]!]!;
    if ((a | b | c | d) < 0) return -1;
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
    if ((a | b | c) < 0) return -1;
    const v = (a << 18) | (b << 12) | (c << 6);
    out[o++] = v >> 16;
    if (rest === 3) out[o++] = (v >> 8) & 0xff;
  }
  return o - at;
}

/**
 * The bytes of the Base64 text `src[start, end)` in a new array, or undefined when the text holds
 * anything but the alphabet and final padding (the caller then uses a lenient decoder).
 */
export function decodeBase64Range(src: Uint8Array, start: number, end: number): Uint8Array | undefined {
  const out = new Uint8Array(base64DecodedLength(src, start, end));
  return decodeBase64Into(src, start, end, out) < 0 ? undefined : out;
}

/** Characters of the padded Base64 text of `bytes` bytes. */
export function base64EncodedLength(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/**
 * Encodes `src[start, end)` as padded Base64 text (ASCII bytes) into `out` from `at`; returns the
 * characters written. `out` must hold base64EncodedLength(end - start) bytes from `at`.
 */
export function encodeBase64Into(
  src: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  at = 0,
): number {
  const need = base64EncodedLength(end - start);
  if (out.length - at < need) {
    throw new RangeError(`encodeBase64Into: output holds ${out.length - at} bytes, ${need} needed`);
  }
  let o = at;
  let i = start;
  for (const whole = end - ((end - start) % 3); i < whole; i += 3) {
    const v = (src[i]! << 16) | (src[i + 1]! << 8) | src[i + 2]!;
    out[o++] = ENCODE[v >> 18]!;
    out[o++] = ENCODE[(v >> 12) & 63]!;
    out[o++] = ENCODE[(v >> 6) & 63]!;
    out[o++] = ENCODE[v & 63]!;
  }
  if (end - i === 1) {
    const v = src[i]! << 16;
    out[o++] = ENCODE[v >> 18]!;
    out[o++] = ENCODE[(v >> 12) & 63]!;
    out[o++] = PAD;
    out[o++] = PAD;
  } else if (end - i === 2) {
    const v = (src[i]! << 16) | (src[i + 1]! << 8);
    out[o++] = ENCODE[v >> 18]!;
    out[o++] = ENCODE[(v >> 12) & 63]!;
    out[o++] = ENCODE[(v >> 6) & 63]!;
    out[o++] = PAD;
  }
  return o - at;
}
