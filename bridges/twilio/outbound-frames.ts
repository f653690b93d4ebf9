// The bridge's `media` and `mark` messages of one stream, built as finished WebSocket text frames
// (server to client: unmasked, RFC 6455 §5.2) in one buffer the call reuses. Each 20 ms frame of
// agent audio becomes its JSON bytes directly — the µ-law Base64-encoded in place — with no string,
// no Buffer per message and none of the per-message bookkeeping of a WebSocket library send:
// everything a pacer wake-up sends leaves in one socket write. The bytes are exactly those of
// AppMessageWriter's strings (protocol.ts).
import { Buffer } from "node:buffer";
import { base64EncodedLength, encodeBase64Into } from "../../src/core/base64.ts";

const FIN_TEXT = 0x81;
const INITIAL_BYTES = 4096;
/** Printable ASCII but `"` and `\`: a string that is its own JSON body, quotes aside. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

export class OutboundFrames {
  /** `{"event":"media","streamSid":"…","media":{"payload":"` */
  readonly #mediaHead: Buffer;
  /** `{"event":"mark","streamSid":"…","mark":{"name":` */
  readonly #markHead: Buffer;
  #buf = Buffer.alloc(INITIAL_BYTES);
  #used = 0;

  constructor(streamSid: string) {
    const sid = JSON.stringify(streamSid);
    this.#mediaHead = Buffer.from(`{"event":"media","streamSid":${sid},"media":{"payload":"`, "utf8");
    this.#markHead = Buffer.from(`{"event":"mark","streamSid":${sid},"mark":{"name":`, "utf8");
  }

  /** Bytes built and not yet taken. */
  get pending(): number {
    return this.#used;
  }

  /** Appends a media message carrying `audio` (µ-law bytes) as its Base64 payload. */
  media(audio: Uint8Array): void {
    const head = this.#mediaHead;
    const length = head.length + base64EncodedLength(audio.length) + 3;
    let at = this.#frame(length);
    const buf = this.#buf;
    head.copy(buf, at);
    at += head.length;
    at += encodeBase64Into(audio, 0, audio.length, buf, at);
    buf[at++] = 0x22; // "
    buf[at++] = 0x7d; // }
    buf[at++] = 0x7d; // }
    this.#used = at;
  }

  /** Appends a mark message named `name`. */
  mark(name: string): void {
    const head = this.#markHead;
    // The name as JSON: written as it is when it needs no escaping (the ledger's names never do).
    const plain = PLAIN_JSON.test(name);
    const json = plain ? name : JSON.stringify(name);
    const quoted = plain ? name.length + 2 : Buffer.byteLength(json, "utf8");
    let at = this.#frame(head.length + quoted + 2);
    const buf = this.#buf;
    head.copy(buf, at);
    at += head.length;
    if (plain) {
      buf[at++] = 0x22;
      at += buf.write(name, at, "latin1");
      buf[at++] = 0x22;
    } else {
      at += buf.write(json, at, "utf8");
    }
    buf[at++] = 0x7d;
    buf[at++] = 0x7d;
    this.#used = at;
  }

  /** The frames built so far, to write; the buffer is reused unless sent(false) says otherwise. */
  take(): Buffer {
    const out = this.#buf.subarray(0, this.#used);
    this.#used = 0;
    return out;
  }

  /**
   * After writing take()'s bytes: `released` tells whether the socket was done with them when the
   * write returned. If it still holds them (its kernel buffer was full), the next frames go to a new
   * buffer instead of overwriting bytes not yet sent.
   */
  sent(released: boolean): void {
    if (!released) this.#buf = Buffer.alloc(this.#buf.length);
  }

  /** Writes the header of a frame of `length` payload bytes; returns where its payload starts. */
  #frame(length: number): number {
    const header = length < 126 ? 2 : length < 65536 ? 4 : 10;
    this.#reserve(header + length);
    const buf = this.#buf;
    let at = this.#used;
    buf[at++] = FIN_TEXT;
    if (header === 2) buf[at++] = length;
    else if (header === 4) {
      buf[at++] = 126;
      buf[at++] = length >> 8;
      buf[at++] = length & 0xff;
    } else {
      buf[at++] = 127;
      buf.writeBigUInt64BE(BigInt(length), at);
      at += 8;
    }
    return at;
  }

  #reserve(bytes: number): void {
    if (this.#used + bytes <= this.#buf.length) return;
    const grown = Buffer.alloc(Math.max(2 * this.#buf.length, this.#used + bytes));
    this.#buf.copy(grown, 0, 0, this.#used);
    this.#buf = grown;
  }
}
