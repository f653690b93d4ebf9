// The server end of a WebSocket (RFC 6455) on a socket the HTTP server handed over at an
// upgrade: the handshake, the frames in (websocket-frames.ts), text and binary messages out,
// pings answered, and the closing handshake. No extension is negotiated (no compression: audio
// does not compress and per-message deflate costs CPU and memory per connection). The events
// and calls are those of the `ws` library's server sockets that the bridge used before.
import { createHash } from "node:crypto";
import { EventEmitter } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { FrameReader, validCloseCode } from "./websocket-frames.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const KEY = /^[+/0-9A-Za-z]{22}==$/;
/** How long a close waits for the peer's close frame before the socket is dropped (as ws). */
const CLOSE_TIMEOUT_MS = 30_000;
const EMPTY: Buffer = Buffer.alloc(0);

export interface ServerWebSocketEvents {
  message: [data: Buffer, isBinary: boolean];
  close: [code: number, reason: Buffer];
  error: [err: Error];
}

export class ServerWebSocket extends EventEmitter<ServerWebSocketEvents> {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  readonly OPEN = 1;
  readyState: 0 | 1 | 2 | 3 = 1;
  /** The TCP (or TLS) socket: for cork/uncork and writes of ready-made frames. */
  readonly socket: Socket;
  #closeSent = false;
  #closeReceived = false;
  #code = 1006;
  #reason: Buffer = EMPTY;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(socket: Socket, head: Buffer, maxPayload: number) {
    super();
    this.socket = socket;
    const reader = new FrameReader(
      {
        message: (data, binary) => this.emit("message", data, binary),
        ping: (data) => this.#write(0x8a, data),
        close: (code, reason) => this.#onClose(code, reason),
        fail: (code, why) => this.#onFail(code, why),
      },
      maxPayload,
    );
    socket.setTimeout(0);
    socket.setNoDelay(true);
    // Bytes that came with the upgrade request are the first frames; 'data' delivers them once
    // the stream flows (the listener is added now, the flow starts on a later tick).
    if (head.length > 0) socket.unshift(head);
    socket.on("data", (chunk: Buffer) => reader.push(chunk));
    socket.on("end", () => {
      this.readyState = 2;
      socket.end();
    });
    // A socket error ends the connection: 'close' follows with 1006, as ws does.
    socket.on("error", () => socket.destroy());
    socket.once("close", () => {
      this.readyState = 3;
      clearTimeout(this.#closeTimer);
      this.emit("close", this.#code, this.#reason);
    });
  }

  /** Bytes written and not yet handed to the kernel. */
  get bufferedAmount(): number {
    return this.socket.writableLength;
  }

  /** Sends a text message (a string) or a binary one (bytes); dropped once closing, as ws does. */
  send(data: string | Uint8Array): void {
    if (this.readyState !== 1) return;
    if (typeof data === "string") this.#write(0x81, data);
    else this.#write(0x82, data);
  }

  /** Starts the closing handshake; with no code, the close frame carries none (1005 for the peer). */
  close(code?: number, reason = ""): void {
    if (this.readyState === 3) return;
    if (this.#closeSent) {
      if (this.#closeReceived) this.socket.end();
      return;
    }
    let payload = EMPTY;
    if (code !== undefined) {
      if (!validCloseCode(code)) throw new RangeError(`invalid close code ${code}`);
      payload = Buffer.alloc(2 + Buffer.byteLength(reason));
      if (payload.length > 125) throw new RangeError("close reason longer than 123 bytes");
      payload.writeUInt16BE(code, 0);
      payload.write(reason, 2);
    }
    this.readyState = 2;
    this.#closeSent = true;
    this.#write(0x88, payload);
    if (this.#closeReceived) this.socket.end();
    else this.#closeTimer = setTimeout(() => this.socket.destroy(), CLOSE_TIMEOUT_MS).unref();
  }

  /** Drops the connection at once, with no closing handshake. */
  terminate(): void {
    this.readyState = 2;
    this.socket.destroy();
  }

  #onClose(code: number, reason: Buffer): void {
    this.#closeReceived = true;
    this.#code = code;
    this.#reason = reason;
    this.socket.pause(); // nothing after a close frame is read
    if (code === 1005) this.close();
    else this.close(code);
  }

  #onFail(code: number, why: string): void {
    this.socket.removeAllListeners("data");
    this.socket.resume();
    this.close(code);
    this.socket.end();
    this.emit("error", Object.assign(new Error(`WebSocket protocol error: ${why}`), { closeCode: code }));
  }

  /** One frame, server to client: FIN set, unmasked; a string's UTF-8 is written into it directly. */
  #write(b0: number, payload: Uint8Array | string): void {
    const n = typeof payload === "string" ? Buffer.byteLength(payload) : payload.length;
    const hdr = n < 126 ? 2 : n < 65536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(hdr + n);
    frame[0] = b0;
    if (hdr === 2) frame[1] = n;
    else if (hdr === 4) {
      frame[1] = 126;
      frame.writeUInt16BE(n, 2);
    } else {
      frame[1] = 127;
      frame.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
      frame.writeUInt32BE(n >>> 0, 6);
    }
    if (typeof payload === "string") frame.write(payload, hdr);
    else frame.set(payload, hdr);
    this.socket.write(frame);
  }
}

/** Why an upgrade request is not a WebSocket handshake this server takes, or undefined. */
function handshakeProblem(req: IncomingMessage): { status: number; text: string } | undefined {
  if (req.method !== "GET") return { status: 405, text: "Method Not Allowed" };
  if ((req.headers.upgrade ?? "").toLowerCase() !== "websocket")
    return { status: 400, text: "Bad Request (Upgrade is not websocket)" };
  if (!KEY.test(req.headers["sec-websocket-key"] ?? ""))
    return { status: 400, text: "Bad Request (Sec-WebSocket-Key missing or malformed)" };
  const version = req.headers["sec-websocket-version"];
  if (version !== "13" && version !== "8")
    return { status: 400, text: "Bad Request (Sec-WebSocket-Version must be 13)" };
  return undefined;
}

/**
 * Completes the handshake of an upgrade request on `socket`, or answers it with an HTTP error and
 * returns undefined.
 */
export function acceptWebSocket(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  maxPayload: number,
): ServerWebSocket | undefined {
  const problem = handshakeProblem(req);
  if (problem) {
    if (socket.writable)
      socket.end(
        `HTTP/1.1 ${problem.status} ${problem.text}\r\nSec-WebSocket-Version: 13\r\nConnection: close\r\n` +
          `Content-Length: 0\r\n\r\n`,
      );
    return undefined;
  }
  if (!socket.readable || !socket.writable) {
    socket.destroy();
    return undefined;
  }
  const accept = createHash("sha1")
    .update(req.headers["sec-websocket-key"] + GUID)
    .digest("base64");
  socket.write(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  return new ServerWebSocket(socket as Socket, head, maxPayload);
}
