// What a file is, from its first bytes (never from its name): the container/codec family of the
// images, audio and video the service accepts. Pure; callers pass the head of the file (4 KiB
// is enough for every signature here).

export type MediaKind = "image" | "audio" | "video";

export interface Sniffed {
  kind: MediaKind;
  /** Short format name: png, jpeg, gif, webp, mp3, wav, mp4, mov, mkv, webm. */
  format: string;
  mime: string;
}

/** Bytes to read for sniff(). */
export const SNIFF_BYTES = 4096;

const ascii = (b: Uint8Array, at: number, len: number): string =>
  String.fromCharCode(...b.subarray(at, at + len));

export function sniff(b: Uint8Array): Sniffed | undefined {
  if (b.length >= 8 && b[0] === 0x89 && ascii(b, 1, 3) === "PNG" && b[4] === 0x0d && b[5] === 0x0a) {
    return { kind: "image", format: "png", mime: "image/png" };
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    return { kind: "image", format: "jpeg", mime: "image/jpeg" };
  }
  if (b.length >= 6 && (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a")) {
    return { kind: "image", format: "gif", mime: "image/gif" };
  }
  if (b.length >= 12 && ascii(b, 0, 4) === "RIFF") {
    const form = ascii(b, 8, 4);
    if (form === "WEBP") return { kind: "image", format: "webp", mime: "image/webp" };
    if (form === "WAVE") return { kind: "audio", format: "wav", mime: "audio/wav" };
  }
  if (b.length >= 12 && ascii(b, 4, 4) === "ftyp") {
    const brand = ascii(b, 8, 4);
    if (brand === "qt  ") return { kind: "video", format: "mov", mime: "video/quicktime" };
    // Audio-only MPEG-4 brands are not video.
    if (brand === "M4A " || brand === "M4B ") return undefined;
    return { kind: "video", format: "mp4", mime: "video/mp4" };
  }
  if (b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) {
    const head = ascii(b, 0, Math.min(b.length, 64));
    if (head.includes("webm")) return { kind: "video", format: "webm", mime: "video/webm" };
    return { kind: "video", format: "mkv", mime: "video/x-matroska" };
  }
  if (b.length >= 10 && ascii(b, 0, 3) === "ID3") {
    return { kind: "audio", format: "mp3", mime: "audio/mpeg" };
  }
  if (isMp3Frame(b, 0) && b.length >= 4) {
    return { kind: "audio", format: "mp3", mime: "audio/mpeg" };
  }
  return undefined;
}

/** An MPEG-1/2 Layer III frame header at `at`: sync, valid version, layer III, valid bitrate and rate. */
function isMp3Frame(b: Uint8Array, at: number): boolean {
  if (b.length < at + 4) return false;
  const b1 = b[at + 1]!;
  const b2 = b[at + 2]!;
  return (
    b[at] === 0xff &&
    (b1 & 0xe0) === 0xe0 &&
    ((b1 >> 3) & 0x3) !== 1 && // version: reserved
    ((b1 >> 1) & 0x3) === 1 && // layer III
    b2 >> 4 !== 0xf && // bitrate: bad
    ((b2 >> 2) & 0x3) !== 3 // sample rate: reserved
  );
}
