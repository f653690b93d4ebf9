// The voice server's UDP socket: answers IP discovery (74-byte request type 1 → response type 2 with the
// address NUL-terminated at offset 8 and the port big-endian in the last two bytes), ignores the client's
// 8-byte keep-alives, and hands every RTP packet to the call by SSRC with its arrival time.

import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { once } from "node:events";
import { performance } from "node:perf_hooks";

const DISCOVERY_LENGTH = 74;
const KEEP_ALIVE_LENGTH = 8;

export interface UdpPeer {
  address: string;
  port: number;
}

export class VoiceUdpServer {
  readonly #socket: Socket;
  /** Where each SSRC's discovery came from: the client's real UDP address. */
  readonly #peers = new Map<number, UdpPeer>();
  #onRtp: (ssrc: number, packet: Buffer, at: number) => void = () => {};
  discoveries = 0;
  keepAlives = 0;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on("message", (msg, rinfo) => this.#message(msg, rinfo));
  }

  static async start(): Promise<VoiceUdpServer> {
    const socket = createSocket("udp4");
    socket.bind(0, "127.0.0.1");
    await once(socket, "listening");
    return new VoiceUdpServer(socket);
  }

  get port(): number {
    return this.#socket.address().port;
  }

  onRtp(handler: (ssrc: number, packet: Buffer, at: number) => void): void {
    this.#onRtp = handler;
  }

  /** The address the client with this SSRC discovered from, if it has. */
  peer(ssrc: number): UdpPeer | undefined {
    return this.#peers.get(ssrc);
  }

  send(peer: UdpPeer, packet: Buffer): void {
    this.#socket.send(packet, peer.port, peer.address);
  }

  #message(msg: Buffer, rinfo: RemoteInfo): void {
    if (msg.length === DISCOVERY_LENGTH && msg.readUInt16BE(0) === 1) {
      const ssrc = msg.readUInt32BE(4);
      this.#peers.set(ssrc, { address: rinfo.address, port: rinfo.port });
      this.discoveries++;
      const reply = Buffer.alloc(DISCOVERY_LENGTH);
      reply.writeUInt16BE(2, 0);
      reply.writeUInt16BE(70, 2);
      reply.writeUInt32BE(ssrc, 4);
      reply.write(rinfo.address, 8, "ascii");
      reply.writeUInt16BE(rinfo.port, DISCOVERY_LENGTH - 2);
      this.#socket.send(reply, rinfo.port, rinfo.address);
      return;
    }
    if (msg.length === KEEP_ALIVE_LENGTH) {
      this.keepAlives++;
      return;
    }
    if (msg.length < 12 || (msg[0]! & 0xc0) !== 0x80) return;
    this.#onRtp(msg.readUInt32BE(8), msg, performance.now());
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#socket.close(() => resolve()));
  }
}
