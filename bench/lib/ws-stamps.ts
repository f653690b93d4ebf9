// The simulated Twilio's side of native/bench/ws-stamps.c: a WebSocket (the `ws` client, after its
// handshake) whose incoming frames are read by the addon's thread with the kernel's receive stamp
// of each, instead of by Node's event loop. Sending stays with `ws`. The load generator then times
// the bridge's frames by when they reached this host, so its own stalls (a loop that reads late)
// are not charged to the bridge, as SIP's load generators do with SIOCGSTAMPNS per datagram.
import { Buffer } from "node:buffer";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import type { Socket } from "node:net";
import { fileURLToPath } from "node:url";
import type { WebSocket } from "ws";
import type { SimulateCallOptions } from "../../tools/twilio-sim/simulate.ts";
import { performanceMsOf } from "./monotonic-clock.ts";

export const WS_STAMPS_ADDON_PATH = fileURLToPath(
  new URL("../../native/build/ws-stamps.node", import.meta.url),
);

interface WsStampsAddon {
  /** Throws if the thread cannot be given `nice`. */
  start(onReady: () => void, nice?: number): void;
  /** A handle for the socket, in each of its records; never the same for two live sockets. */
  add(fd: number): number;
  remove(handle: number): void;
  drain(): Buffer | undefined;
}

/** What a stamped socket hears: each whole message (text or binary), and the stream's end. */
export interface StampedHandlers {
  /** `stampMs`: when its last byte reached this host, performance.now() time (the read time if the kernel gave none). */
  message(data: Buffer, isBinary: boolean, stampMs: number): void;
  /** The bridge closed the stream (a close frame or end of the TCP stream). */
  end(): void;
}

/** The private parts of `ws` and `net` this reaches into: the TCP socket and its libuv handle. */
interface SocketInternals {
  _socket?: Socket & { _handle?: { fd?: number; reading?: boolean; readStop?(): number } | null };
}

const HEAD = 20;
const OP_CONTINUATION = 0;
const OP_BINARY = 2;
const OP_CLOSE = 8;
const OP_PING = 9;

export class StampedReader {
  readonly #addon: WsStampsAddon;
  /** By add()'s handle. */
  readonly #sockets = new Map<
    number,
    { handlers: StampedHandlers; parts: Buffer[]; binary: boolean; ws: WebSocket }
  >();

  private constructor(addon: WsStampsAddon, nice: number | undefined) {
    this.#addon = addon;
    addon.start(() => this.#drain(), nice);
  }

  static #one: StampedReader | undefined;

  /**
   * The process's reader, or undefined when the addon is not built (make setup builds it).
   * `nice`: its reading thread's nice, given by the first call (the reader is made once).
   */
  static get(nice?: number): StampedReader | undefined {
    if (StampedReader.#one) return StampedReader.#one;
    if (!existsSync(WS_STAMPS_ADDON_PATH)) return undefined;
    const addon = createRequire(import.meta.url)(WS_STAMPS_ADDON_PATH) as WsStampsAddon;
    StampedReader.#one = new StampedReader(addon, nice);
    return StampedReader.#one;
  }

  /**
   * Takes over reading an open WebSocket: Node stops reading its socket (nothing may be in flight
   * from the server yet: the bridge says nothing before the caller's `start`), the addon reads it.
   * The socket's `close` unregisters it. Pings are answered here.
   */
  attach(ws: WebSocket, handlers: StampedHandlers): void {
    const tcp = (ws as unknown as SocketInternals)._socket;
    const handle = tcp?._handle;
    if (!tcp || !handle || typeof handle.fd !== "number" || handle.fd < 0 || !handle.readStop)
      throw new Error("StampedReader.attach: the WebSocket has no TCP socket with a file descriptor");
    // `ws` reads through the socket's 'data' events; with no listener and the handle stopped, Node
    // does not read it again (only read() or resume() would restart it, and nothing calls them).
    tcp.removeAllListeners("data");
    tcp.pause();
    handle.readStop();
    handle.reading = false;
    const id = this.#addon.add(handle.fd);
    this.#sockets.set(id, { handlers, parts: [], binary: false, ws });
    tcp.once("close", () => this.#forget(id));
  }

  #drain(): void {
    const buf = this.#addon.drain();
    if (!buf) return;
    const readAt = performance.now();
    for (let at = 0; at + HEAD <= buf.length; ) {
      const id = buf.readUInt32LE(at);
      const kind = buf[at + 4]!;
      const first = buf[at + 5]!;
      const len = buf.readUInt32LE(at + 8);
      const stamp = buf.readDoubleLE(at + 12);
      const payload = buf.subarray(at + HEAD, at + HEAD + len);
      at += HEAD + len;
      const s = this.#sockets.get(id);
      if (!s) continue;
      if (kind === 1) {
        this.#end(id);
        continue;
      }
      const opcode = first & 0x0f;
      const fin = (first & 0x80) !== 0;
      if (opcode === OP_CLOSE) {
        this.#end(id);
        continue;
      }
      if (opcode === OP_PING) {
        s.ws.pong(payload);
        continue;
      }
      if (opcode > 7) continue; // pong, reserved control frames
      // A message's first frame starts it afresh (parts emptied in place: no array per message).
      if (opcode !== OP_CONTINUATION) {
        s.parts.length = 0;
        s.binary = opcode === OP_BINARY;
      }
      if (!fin) {
        s.parts.push(payload);
        continue;
      }
      let data = payload;
      if (s.parts.length) {
        s.parts.push(payload);
        data = Buffer.concat(s.parts);
        s.parts.length = 0;
      }
      s.handlers.message(data, s.binary, Number.isNaN(stamp) ? readAt : performanceMsOf(stamp));
    }
  }

  /** The bridge ended the stream: stop reading and let `ws` close its side (its 'close' follows). */
  #end(id: number): void {
    const s = this.#sockets.get(id);
    if (!s) return;
    this.#forget(id);
    s.handlers.end();
    s.ws.terminate();
  }

  #forget(id: number): void {
    if (!this.#sockets.delete(id)) return;
    this.#addon.remove(id);
  }
}

/**
 * simulateCall's `attachReader` over the process's StampedReader, each message's arrival on the
 * performance clock (the simulator's); undefined when the addon is not built (read times then).
 */
export function stampedAttach(readerNice?: number): SimulateCallOptions["attachReader"] {
  const reader = StampedReader.get(readerNice);
  if (!reader) return undefined;
  return (ws, onMessage) => reader.attach(ws, { message: onMessage, end: () => {} });
}
