// A SIP call's media under test: the real transport on a real UDP socket from the real pool,
// on virtual time, and a peer socket playing the caller's side of RTP.
import type dgram from "node:dgram";
import type { NegotiatedMedia, SipCallControl } from "../../../../bridges/sip/media-port.ts";
import { RtpCallTransport } from "../../../../bridges/sip/rtp/call-transport.ts";
import { UdpRtpPortPool } from "../../../../bridges/sip/rtp/port-pool.ts";
import { emptyRtpHeader, parseRtp } from "../../../../bridges/sip/rtp/rtp-packet.ts";
import type { TransportListener } from "../../../../bridges/transport.ts";
import { type Clock, VirtualClock } from "../../../../src/core/clock.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { bindUdp, freeEvenRange } from "./ports.ts";

export interface Received {
  /** Arrival, performance.now() ms. */
  at: number;
  marker: boolean;
  payloadType: number;
  sequence: number;
  timestamp: number;
  ssrc: number;
  payload: Uint8Array;
}

/** The caller's RTP socket: records what arrives, sends what the test says. */
export class Peer {
  readonly socket: dgram.Socket;
  readonly received: Received[] = [];

  constructor(socket: dgram.Socket) {
    this.socket = socket;
    socket.on("message", (msg) => {
      const h = emptyRtpHeader();
      if (parseRtp(msg, h)) return;
      this.received.push({
        at: performance.now(),
        marker: h.marker,
        payloadType: h.payloadType,
        sequence: h.sequence,
        timestamp: h.timestamp,
        ssrc: h.ssrc,
        payload: new Uint8Array(msg.subarray(h.payloadStart, h.payloadEnd)),
      });
    });
  }

  static async open(): Promise<Peer> {
    return new Peer(await bindUdp(0));
  }

  get port(): number {
    return this.socket.address().port;
  }

  send(bytes: Uint8Array, port: number): Promise<void> {
    return new Promise((resolve, reject) =>
      this.socket.send(bytes, port, "127.0.0.1", (err) => (err ? reject(err) : resolve())),
    );
  }

  close(): Promise<void> {
    return new Promise((r) => this.socket.close(() => r()));
  }
}

export interface CallEvents {
  frames: Int16Array[];
  digits: string[];
  played: number[];
  ended: string[];
}

export interface Rig<C extends Clock = VirtualClock> {
  clock: C;
  pool: UdpRtpPortPool;
  transport: RtpCallTransport;
  events: CallEvents;
  control: { hangUps: string[]; transfers: string[] } & SipCallControl;
  /** Attaches the recording listener (when openCall was told not to). */
  attach(): void;
  close(): Promise<void>;
}

export function media(
  peerPort: number,
  codec: NegotiatedMedia["codec"] = { name: "pcmu", payloadType: 0, clockRate: 8000 },
  extra: Partial<NegotiatedMedia> = {},
): NegotiatedMedia {
  return {
    codec,
    telephoneEventPt: 101,
    remote: { address: "127.0.0.1", port: peerPort },
    direction: "sendrecv",
    ...extra,
  };
}

/** A call on virtual time (the default) or on `opts.clock`: the send thread paces on real time regardless. */
export async function openCall<C extends Clock = VirtualClock>(
  m: NegotiatedMedia,
  mediaTimeoutMs = 30_000,
  opts: { attach?: boolean; clock?: C; earlyAudio?: (pcm: Int16Array) => void } = {},
): Promise<Rig<C>> {
  const base = await freeEvenRange(1);
  const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base + 1}` });
  const endpoint = await pool.open();
  const clock = opts.clock ?? (new VirtualClock(1000) as Clock as C);
  const hangUps: string[] = [];
  const transfers: string[] = [];
  const control = {
    hangUps,
    transfers,
    hangUp: async (reason: string) => {
      hangUps.push(reason);
    },
    transfer: async (target: string) => {
      transfers.push(target);
    },
  };
  const transport = new RtpCallTransport({
    info: { callId: "call-1", transport: "sip", params: {} },
    endpoint,
    media: m,
    control,
    clock,
    log: silentLogger,
    mediaTimeoutMs,
    ...(opts.earlyAudio ? { earlyAudio: opts.earlyAudio } : {}),
  });
  const events: CallEvents = { frames: [], digits: [], played: [], ended: [] };
  const listener: TransportListener = {
    audio: (f) => events.frames.push(f.slice()),
    dtmf: (d) => events.digits.push(d),
    played: (ms) => events.played.push(ms),
    ended: (r) => events.ended.push(r),
  };
  if (opts.attach ?? true) transport.attach(listener);
  return {
    clock,
    pool,
    transport,
    events,
    control,
    attach: () => transport.attach(listener),
    close: async () => transport.end("test over"),
  };
}
