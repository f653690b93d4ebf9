// A client's WebSocket frames (RFC 6455 §5) read from a socket's chunks, for the bridge's
// WebSocket paths (Twilio media streams, browser calls, the console feed). A media stream
// brings 50 small messages a second per call; a general library's receiver (a Writable stream,
// a Buffer view per header field, a callback per chunk) allocated more per call than the rest
// of the call's path together, and its garbage set the GC's pace at 200 calls. Here a frame
// that lies whole in a chunk is unmasked in place and handed on as one view of that chunk;
// only a frame cut by a chunk boundary is copied, once, into a buffer of its full size.
import { Buffer, isUtf8 } from "node:buffer";

/** What the reader hands on; views point into the socket's chunks and are valid during the call. */
export interface FrameSink {
  /** A whole message (fragments joined); text is checked UTF-8. */
  message(data: Buffer, binary: boolean): void;
  ping(data: Buffer): void;
  /** A close frame: its code (1005 when it carries none) and reason. */
  close(code: number, reason: Buffer): void;
  /** The peer broke the protocol: close with `code` (1002, 1007, 1009); nothing more is read. */
  fail(code: number, why: string): void;
}

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;
const INCOMPLETE = 0;
/** The first buffer of a frame cut by a chunk boundary; a longer one grows as its bytes come. */
const PARTIAL_FIRST = 64 * 1024;
const FAILED = -1;

/** Close codes a peer may send (RFC 6455 §7.4, IANA registry); 1005 and 1006 are never sent. */
export function validCloseCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) ||
    (code >= 3000 && code <= 4999)
  );
}

export class FrameReader {
  readonly #sink: FrameSink;
  readonly #maxPayload: number;
  /** The start of a frame whose header was cut by the end of a chunk (under 14 bytes). */
  #head: Buffer | undefined;
  /**
   * A frame cut by the end of a chunk, header included, being filled to its full size (#total). Its
   * buffer grows as bytes come, from at most PARTIAL_FIRST: a header alone does not reserve a
   * message of up to maxPayload.
   */
  #partial: Buffer | undefined;
  #fill = 0;
  #total = 0;
  /** Fragments of a message in progress, and their opcode (-1: none in progress). */
  #fragments: Buffer[] = [];
  #fragmentBytes = 0;
  #fragmentOp = -1;
  #failed = false;
  #closed = false;

  constructor(sink: FrameSink, maxPayload: number) {
    this.#sink = sink;
    this.#maxPayload = maxPayload;
  }

  /** Reads the frames in `chunk` (which the reader may modify: it unmasks in place). */
  push(chunk: Buffer): void {
    if (this.#failed || this.#closed) return;
    let buf = chunk;
    let at = 0;
    let partial = this.#partial;
    if (partial) {
      const n = Math.min(this.#total - this.#fill, chunk.length);
      if (this.#fill + n > partial.length) {
        const grown = Buffer.allocUnsafe(Math.min(this.#total, Math.max(this.#fill + n, 2 * partial.length)));
        partial.copy(grown, 0, 0, this.#fill);
        partial = this.#partial = grown;
      }
      chunk.copy(partial, this.#fill, 0, n);
      this.#fill += n;
      if (this.#fill < this.#total) return;
      this.#partial = undefined;
      if (this.#frame(partial, 0) === FAILED) return;
      at = n;
    } else if (this.#head) {
      buf = Buffer.concat([this.#head, chunk]);
      this.#head = undefined;
    }
    while (at < buf.length && !this.#closed) {
      const used = this.#frame(buf, at);
      if (used === FAILED) return;
      if (used === INCOMPLETE) return;
      at += used;
    }
  }

  /**
   * The frame at `at`: handled, and its length returned; or, when the buffer ends inside it, kept
   * for the next chunk and INCOMPLETE returned; or FAILED.
   */
  #frame(buf: Buffer, at: number): number {
    const avail = buf.length - at;
    if (avail < 2) return this.#keepHead(buf, at);
    const b0 = buf[at]!;
    const b1 = buf[at + 1]!;
    const fin = (b0 & 0x80) !== 0;
    const op = b0 & 0x0f;
    if ((b0 & 0x70) !== 0) return this.#fail(1002, "RSV bits set without a negotiated extension");
    if ((b1 & 0x80) === 0) return this.#fail(1002, "a client frame is not masked");
    let len = b1 & 0x7f;
    let hdr = 2;
    if (len === 126) {
      if (avail < 4) return this.#keepHead(buf, at);
      len = buf.readUInt16BE(at + 2);
      hdr = 4;
    } else if (len === 127) {
      if (avail < 10) return this.#keepHead(buf, at);
      const hi = buf.readUInt32BE(at + 2);
      // Beyond 2^53 a length is not a number; any such length is over the limit anyway.
      len = hi > 0x1fffff ? Number.MAX_SAFE_INTEGER : hi * 2 ** 32 + buf.readUInt32BE(at + 6);
      hdr = 10;
    }
    if (op >= OP_CLOSE) {
      if (op !== OP_CLOSE && op !== OP_PING && op !== OP_PONG)
        return this.#fail(1002, `unknown control opcode ${op}`);
      if (!fin) return this.#fail(1002, "a fragmented control frame");
      if (len > 125) return this.#fail(1002, "a control frame longer than 125 bytes");
    } else {
      if (op !== OP_CONTINUATION && op !== OP_TEXT && op !== OP_BINARY)
        return this.#fail(1002, `unknown data opcode ${op}`);
      if (op === OP_CONTINUATION && this.#fragmentOp < 0)
        return this.#fail(1002, "a continuation frame with no message to continue");
      if (op !== OP_CONTINUATION && this.#fragmentOp >= 0)
        return this.#fail(1002, "a new message before the fragmented one ended");
      if (this.#fragmentBytes + len > this.#maxPayload)
        return this.#fail(1009, `a message over ${this.#maxPayload} bytes`);
    }
    const total = hdr + 4 + len;
    if (avail < total) {
      if (avail < hdr + 4) return this.#keepHead(buf, at);
      const partial = Buffer.allocUnsafe(Math.min(total, Math.max(avail, PARTIAL_FIRST)));
      buf.copy(partial, 0, at);
      this.#partial = partial;
      this.#fill = avail;
      this.#total = total;
      return INCOMPLETE;
    }
    const start = at + hdr + 4;
    unmask(buf, at + hdr, start, start + len);
    const payload = buf.subarray(start, start + len);
    return this.#dispatch(op, fin, payload) ? total : FAILED;
  }

  #dispatch(op: number, fin: boolean, payload: Buffer): boolean {
    switch (op) {
      case OP_PING:
        this.#sink.ping(payload);
        return true;
      case OP_PONG:
        return true;
      case OP_CLOSE:
        return this.#close(payload);
    }
    if (fin && this.#fragmentOp < 0) return this.#message(payload, op === OP_BINARY);
    if (op !== OP_CONTINUATION) this.#fragmentOp = op;
    this.#fragments.push(payload);
    this.#fragmentBytes += payload.length;
    if (!fin) return true;
    const whole = Buffer.concat(this.#fragments, this.#fragmentBytes);
    const binary = this.#fragmentOp === OP_BINARY;
    this.#fragments = [];
    this.#fragmentBytes = 0;
    this.#fragmentOp = -1;
    return this.#message(whole, binary);
  }

  #message(data: Buffer, binary: boolean): boolean {
    if (!binary && !isUtf8(data)) {
      this.#fail(1007, "a text message that is not UTF-8");
      return false;
    }
    this.#sink.message(data, binary);
    return true;
  }

  #close(payload: Buffer): boolean {
    if (payload.length === 1) {
      this.#fail(1002, "a close frame with a 1-byte payload");
      return false;
    }
    const code = payload.length === 0 ? 1005 : payload.readUInt16BE(0);
    if (payload.length > 0 && !validCloseCode(code)) {
      this.#fail(1002, `close code ${code} is not one a peer may send`);
      return false;
    }
    const reason = payload.subarray(2);
    if (!isUtf8(reason)) {
      this.#fail(1007, "a close reason that is not UTF-8");
      return false;
    }
    // Nothing after a close frame is read (RFC 6455 §5.5.1).
    this.#closed = true;
    this.#sink.close(code, reason);
    return true;
  }

  /** Keeps the few bytes of a cut header (copied: the chunk they came in can go). */
  #keepHead(buf: Buffer, at: number): number {
    this.#head = Buffer.from(buf.subarray(at));
    return INCOMPLETE;
  }

  #fail(code: number, why: string): number {
    this.#failed = true;
    this.#fragments = [];
    this.#sink.fail(code, why);
    return FAILED;
  }
}

/** XORs buf[from, to) with the 4-byte mask at buf[maskAt]. */
function unmask(buf: Buffer, maskAt: number, from: number, to: number): void {
  const m0 = buf[maskAt]!;
  const m1 = buf[maskAt + 1]!;
  const m2 = buf[maskAt + 2]!;
  const m3 = buf[maskAt + 3]!;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    buf[i] = buf[i]! ^ m0;
    buf[i + 1] = buf[i + 1]! ^ m1;
    buf[i + 2] = buf[i + 2]! ^ m2;
    buf[i + 3] = buf[i + 3]! ^ m3;
  }
  const rest = to - i;
  if (rest > 0) buf[i] = buf[i]! ^ m0;
  if (rest > 1) buf[i + 1] = buf[i + 1]! ^ m1;
  if (rest > 2) buf[i + 2] = buf[i + 2]! ^ m2;
}
