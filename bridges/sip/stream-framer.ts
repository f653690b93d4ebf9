// Cuts a TCP byte stream into SIP messages by Content-Length (RFC 3261 §18.3), answering the
// RFC 5626 CRLF keep-alive ping. Bad framing is fatal to the connection: nothing after it can be
// trusted to start a message.
import { headerEnd, MAX_MESSAGE_BYTES } from "./parse.ts";

export type FrameEvent =
  | { readonly type: "message"; readonly bytes: Buffer }
  /** A double-CRLF ping between messages: answer with a single CRLF (pong). */
  | { readonly type: "ping" }
  | { readonly type: "fatal"; readonly error: string; readonly bytes?: Buffer };

const CONTENT_LENGTH = /^(?:content-length|l)[ \t]*:[ \t]*(\S*)/im;

export class SipStreamFramer {
  #buf: Buffer = Buffer.alloc(0);
  #dead = false;
  /** CR/LF bytes seen since the last message, across chunks (a ping may arrive a byte at a time). */
  #blank = "";

  /** Adds bytes from the socket; returns what became complete. */
  push(chunk: Buffer): FrameEvent[] {
    if (this.#dead) return [];
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const out: FrameEvent[] = [];
    for (;;) {
      let skip = 0;
      while (skip < this.#buf.length && (this.#buf[skip] === 0x0d || this.#buf[skip] === 0x0a)) skip++;
      if (skip > 0) {
        const blank = this.#blank + this.#buf.toString("latin1", 0, skip);
        if (blank.includes("\r\n\r\n")) out.push({ type: "ping" });
        this.#blank = blank.includes("\r\n\r\n") ? "" : blank.slice(-3);
        this.#buf = this.#buf.subarray(skip);
      }
      if (this.#buf.length === 0) return out;
      this.#blank = "";
      const end = headerEnd(this.#buf);
      if (!end) {
        if (this.#buf.length > MAX_MESSAGE_BYTES) return this.#fatal(out, "headers longer than 64 KB");
        return out;
      }
      const head = this.#buf.toString("latin1", 0, end.at);
      const cl = CONTENT_LENGTH.exec(head)?.[1] ?? "0";
      if (!/^\d{1,10}$/.test(cl))
        return this.#fatal(out, `Content-Length "${cl.slice(0, 20)}" is not a number`, end.at);
      const total = end.at + end.len + Number(cl);
      if (total > MAX_MESSAGE_BYTES) return this.#fatal(out, `Content-Length ${cl} is too large`, end.at);
      if (this.#buf.length < total) return out;
      out.push({ type: "message", bytes: this.#buf.subarray(0, total) });
      this.#buf = this.#buf.subarray(total);
    }
  }

  #fatal(out: FrameEvent[], error: string, headEnd?: number): FrameEvent[] {
    this.#dead = true;
    // The headers alone, so the server can still answer 400 to the request they start.
    const bytes =
      headEnd === undefined
        ? undefined
        : Buffer.concat([this.#buf.subarray(0, headEnd), Buffer.from("\r\n\r\n")]);
    out.push(bytes ? { type: "fatal", error, bytes } : { type: "fatal", error });
    this.#buf = Buffer.alloc(0);
    return out;
  }
}
