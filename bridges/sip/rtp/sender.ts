// The send side of one call's RTP stream: random SSRC, sequence and timestamp (RFC 3550 §5.1),
// the marker on the first packet of each talkspurt, and the destination: the SDP address until
// the caller's first packet shows where they really are (symmetric RTP, RFC 4961), then that.
// Packets are written into a small ring of buffers reused for the whole call: a datagram is
// handed to the kernel when send() returns (the endpoint resolves IP literals synchronously),
// and the ring only matters if the kernel ever queues one (a full send buffer).
import type dgram from "node:dgram";
import { RTP_HEADER_BYTES, random16, random32, writeRtpHeader } from "./rtp-packet.ts";

export interface RtpAddress {
  readonly address: string;
  readonly port: number;
}

/** Largest payload we send: 20 ms of G.711 is 160 bytes; an Opus packet can reach 1275. */
const MAX_PAYLOAD = 1500 - 28 - RTP_HEADER_BYTES;
const RING = 16;

export class RtpSender {
  readonly ssrc = random32();
  #sequence = random16();
  #timestamp = random32();
  #payloadType: number;
  #sdpRemote: RtpAddress;
  #latched: RtpAddress | undefined;
  readonly #socket: dgram.Socket;
  readonly #ring: Buffer[] = [];
  /** Each ring buffer's payload part (views made once). */
  readonly #payloads: Buffer[] = [];
  #slot = 0;
  #sent = 0;
  #sendErrors = 0;
  readonly #onSent = (err: Error | null) => {
    if (err) this.#sendErrors++;
  };

  constructor(socket: dgram.Socket, payloadType: number, remote: RtpAddress) {
    this.#socket = socket;
    this.#payloadType = payloadType;
    this.#sdpRemote = remote;
    for (let i = 0; i < RING; i++) {
      const buf = Buffer.alloc(RTP_HEADER_BYTES + MAX_PAYLOAD);
      this.#ring.push(buf);
      this.#payloads.push(buf.subarray(RTP_HEADER_BYTES));
    }
  }

  /** Where packets go now. */
  get destination(): RtpAddress {
    return this.#latched ?? this.#sdpRemote;
  }

  get latched(): boolean {
    return this.#latched !== undefined;
  }

  get stats(): { packets: number; sendErrors: number } {
    return { packets: this.#sent, sendErrors: this.#sendErrors };
  }

  /** A packet of the call came from here: send there from now on (first one wins). */
  latch(address: string, port: number): boolean {
    if (this.#latched) return false;
    this.#latched = { address, port };
    return true;
  }

  /** A re-INVITE: new SDP address and payload type; a new address is latched afresh. */
  update(payloadType: number, remote: RtpAddress): void {
    this.#payloadType = payloadType;
    if (remote.address !== this.#sdpRemote.address || remote.port !== this.#sdpRemote.port) {
      this.#sdpRemote = remote;
      this.#latched = undefined;
    }
  }

  /** Moves the timestamp on by `ticks` with no packet (time the stream lost). */
  skip(ticks: number): void {
    this.#timestamp = (this.#timestamp + ticks) >>> 0;
  }

  /**
   * Copies `payload` into the next packet and sends it, covering `ticks` of the RTP clock;
   * `transmit` false moves the stream on without putting it on the wire (a held call keeps its
   * timeline: the timestamp advances, the sequence number does not).
   */
  sendPayload(payload: Uint8Array, ticks: number, marker: boolean, transmit: boolean): void {
    if (transmit) {
      const n = Math.min(payload.length, MAX_PAYLOAD);
      const buf = this.#ring[this.#slot]!;
      this.#payloads[this.#slot]!.set(n === payload.length ? payload : payload.subarray(0, n));
      writeRtpHeader(buf, marker, this.#payloadType, this.#sequence, this.#timestamp, this.ssrc);
      const to = this.destination;
      this.#socket.send(buf, 0, RTP_HEADER_BYTES + n, to.port, to.address, this.#onSent);
      this.#sequence = (this.#sequence + 1) & 0xffff;
      this.#sent++;
      this.#slot = (this.#slot + 1) % RING;
    }
    this.#timestamp = (this.#timestamp + ticks) >>> 0;
  }
}
