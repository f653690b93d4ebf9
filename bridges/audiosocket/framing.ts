// Asterisk AudioSocket framing (include/asterisk/res_audiosocket.h, res/res_audiosocket.c):
// every message is kind (1 byte), payload length (u16 big-endian), payload. Asterisk sends the
// UUID first, then audio and DTMF; it takes audio and hang-up back, and treats any other kind
// it receives as an error that ends the call, so the bridge never sends anything else.
//
// The parser is length-driven: a frame of a kind it does not know, or longer than its kind
// allows, is skipped by its length (never buffered) and reported, so the stream stays in step
// and a hostile length costs no memory. Frames that arrive whole in one chunk are handed over
// as a range of that chunk, without copying; only a frame split across chunks is gathered.

export const KIND_HANGUP = 0x00;
export const KIND_UUID = 0x01;
export const KIND_DTMF = 0x03;
/** Signed linear 16-bit little-endian mono at 8 kHz: the only format of the AudioSocket() app. */
export const KIND_AUDIO = 0x10;
export const KIND_ERROR = 0xff;

/** Audio kinds and their sample rates (0x11–0x18 come from the channel driver with c(slinNN)). */
const AUDIO_RATES: ReadonlyMap<number, number> = new Map([
  [0x10, 8000],
  [0x11, 12000],
  [0x12, 16000],
  [0x13, 24000],
  [0x14, 32000],
  [0x15, 44100],
  [0x16, 48000],
  [0x17, 96000],
  [0x18, 192000],
]);

/** Sample rate of an audio kind, or undefined when `kind` is not audio. */
export function audioRate(kind: number): number | undefined {
  return AUDIO_RATES.get(kind);
}

/** The audio kind that carries `rate`; throws for a rate AudioSocket has no kind for. */
export function audioKind(rate: number): number {
  for (const [kind, r] of AUDIO_RATES) if (r === rate) return kind;
  throw new RangeError(`AudioSocket has no audio kind for ${rate} Hz`);
}

export const HEADER_BYTES = 3;
export const UUID_BYTES = 16;
/** Longest audio payload accepted, in ms of audio (Asterisk sends 20 ms frames). */
export const MAX_AUDIO_MS = 250;
/** Longest payload accepted for hang-up and error frames (an error carries a 1-byte code). */
const MAX_SMALL_PAYLOAD = 16;

/** Most payload bytes a frame of `kind` may carry, or -1 when the kind is unknown. */
export function maxPayload(kind: number): number {
  const rate = AUDIO_RATES.get(kind);
  if (rate !== undefined) return ((rate * MAX_AUDIO_MS) / 1000) * 2;
  switch (kind) {
    case KIND_UUID:
      return UUID_BYTES;
    case KIND_DTMF:
      return 1;
    case KIND_HANGUP:
    case KIND_ERROR:
      return MAX_SMALL_PAYLOAD;
    default:
      return -1;
  }
}

export function kindName(kind: number): string {
  const rate = AUDIO_RATES.get(kind);
  if (rate !== undefined) return `audio ${rate} Hz`;
  switch (kind) {
    case KIND_HANGUP:
      return "hang-up";
    case KIND_UUID:
      return "uuid";
    case KIND_DTMF:
      return "dtmf";
    case KIND_ERROR:
      return "error";
    default:
      return `unknown 0x${kind.toString(16).padStart(2, "0")}`;
  }
}

/** Why a frame was skipped. */
export type SkipReason = "unknown-kind" | "oversized" | "bad-length";

export interface FrameSink {
  /** A whole frame: its payload is `bytes[start, end)`, valid only during the call. */
  frame(kind: number, bytes: Uint8Array, start: number, end: number): void;
  /** A frame that was skipped by its length, payload unread. */
  skipped(kind: number, length: number, reason: SkipReason): void;
}

/** Streaming parser of AudioSocket frames from TCP chunks of any size. */
export class FrameParser {
  readonly #sink: FrameSink;
  readonly #header = new Uint8Array(HEADER_BYTES);
  #headerFill = 0;
  #kind = 0;
  /** Payload bytes still to gather (or to skip) for the current frame. */
  #need = 0;
  #skipping = false;
  /** Gathers a payload split across chunks; sized to the largest payload seen, at most 64 KiB. */
  #gather = new Uint8Array(0);
  #gatherFill = 0;
  #inPayload = false;
  #stopped = false;

  constructor(sink: FrameSink) {
    this.#sink = sink;
  }

  /** True between frames: a stream that ends here ended cleanly. */
  get atBoundary(): boolean {
    return this.#headerFill === 0 && !this.#inPayload;
  }

  /** Stops delivering: the rest of the current chunk and all later ones are ignored. */
  stop(): void {
    this.#stopped = true;
  }

  push(chunk: Uint8Array): void {
    let pos = 0;
    const n = chunk.length;
    while (pos < n && !this.#stopped) {
      if (!this.#inPayload) {
        // Fast path: a whole header in this chunk.
        if (this.#headerFill === 0 && n - pos >= HEADER_BYTES) {
          this.#beginPayload(chunk[pos]!, (chunk[pos + 1]! << 8) | chunk[pos + 2]!);
          pos += HEADER_BYTES;
        } else {
          this.#header[this.#headerFill++] = chunk[pos++]!;
          if (this.#headerFill < HEADER_BYTES) continue;
          this.#headerFill = 0;
          const h = this.#header;
          this.#beginPayload(h[0]!, (h[1]! << 8) | h[2]!);
        }
        if (this.#need === 0) {
          this.#finish(chunk, pos, pos);
          continue;
        }
      }
      const avail = n - pos;
      if (this.#skipping) {
        const take = Math.min(avail, this.#need);
        this.#need -= take;
        pos += take;
        if (this.#need === 0) this.#inPayload = false;
        continue;
      }
      if (this.#gatherFill === 0 && avail >= this.#need) {
        // Fast path: the whole payload is in this chunk.
        const end = pos + this.#need;
        this.#finish(chunk, pos, end);
        pos = end;
        continue;
      }
      const take = Math.min(avail, this.#need);
      this.#gather.set(chunk.subarray(pos, pos + take), this.#gatherFill);
      this.#gatherFill += take;
      this.#need -= take;
      pos += take;
      if (this.#need === 0) {
        const len = this.#gatherFill;
        this.#gatherFill = 0;
        this.#finish(this.#gather, 0, len);
      }
    }
  }

  #beginPayload(kind: number, length: number): void {
    this.#kind = kind;
    this.#need = length;
    this.#inPayload = true;
    const max = maxPayload(kind);
    const reason: SkipReason | undefined =
      max < 0
        ? "unknown-kind"
        : length > max
          ? "oversized"
          : badLength(kind, length)
            ? "bad-length"
            : undefined;
    this.#skipping = reason !== undefined;
    if (reason) {
      this.#sink.skipped(kind, length, reason);
      if (length === 0) this.#inPayload = false;
      return;
    }
    if (length > this.#gather.length) this.#gather = new Uint8Array(Math.min(65535, Math.max(length, 1024)));
  }

  #finish(bytes: Uint8Array, start: number, end: number): void {
    this.#inPayload = false;
    if (this.#skipping) return;
    this.#sink.frame(this.#kind, bytes, start, end);
  }
}

/** Lengths a known kind never has: a UUID of other than 16 bytes, an empty DTMF or audio frame. */
function badLength(kind: number, length: number): boolean {
  if (kind === KIND_UUID) return length !== UUID_BYTES;
  if (kind === KIND_DTMF) return length !== 1;
  if (AUDIO_RATES.has(kind)) return length === 0;
  return false;
}

/** Writes a frame header for `kind` with `length` payload bytes at `at`. */
export function writeHeader(out: Uint8Array, at: number, kind: number, length: number): void {
  out[at] = kind;
  out[at + 1] = (length >> 8) & 0xff;
  out[at + 2] = length & 0xff;
}

/** A whole frame as bytes (for control frames and tests; audio is written in place). */
export function encodeFrame(kind: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  if (payload.length > 0xffff) throw new RangeError(`AudioSocket payload too long: ${payload.length} bytes`);
  const out = new Uint8Array(HEADER_BYTES + payload.length);
  writeHeader(out, 0, kind, payload.length);
  out.set(payload, HEADER_BYTES);
  return out;
}

/** The hang-up frame: kind 0x00, no payload. */
export const HANGUP_FRAME: Uint8Array = encodeFrame(KIND_HANGUP);

/** Formats a 16-byte UUID payload as 8-4-4-4-12 lower-case hex. */
export function formatUuid(bytes: Uint8Array, start: number): string {
  let hex = "";
  for (let i = 0; i < UUID_BYTES; i++) hex += bytes[start + i]!.toString(16).padStart(2, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The 16 bytes of a UUID written 8-4-4-4-12 (hyphens optional); throws on anything else. */
export function parseUuid(text: string): Uint8Array {
  const hex = text.replaceAll("-", "");
  if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new RangeError(`not a UUID: ${JSON.stringify(text)}`);
  const out = new Uint8Array(UUID_BYTES);
  for (let i = 0; i < UUID_BYTES; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}
