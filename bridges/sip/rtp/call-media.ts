// One SIP call's RTP on its own UDP socket: RtpReceiver turns datagrams into 20 ms frames and
// digits, RtpOutbound queues the agent's voice for the native send thread (silence between
// replies) and latches onto where the caller's packets come from (symmetric RTP). It also keeps
// the media timeout, which needs the time of the last packet. It runs wherever the socket is
// received on: the bridge's thread (tests, `SIP_RTP_THREAD=main`), or the RTP worker, whose loop
// does nothing else so that the sessions' work does not delay the caller's frames. What it tells the call goes through
// RtpMediaEvents; the call (call-transport.ts) holds everything above the packets.
import type { Clock, TimerHandle } from "../../../src/core/clock.ts";
import type { AgentAudio } from "../../transport.ts";
import type { MediaDirection, NegotiatedMedia, RtpEndpoint } from "../media-port.ts";
import { rtpSender, type SrtpInbound } from "./native-sender.ts";
import { RtpOutbound, type RtpSendStats } from "./outbound.ts";
import type { UdpRtpEndpoint } from "./port-pool.ts";
import { type ReceiverStats, RtpReceiver } from "./receiver.ts";

/** What a call's media tells the call. `frame` lends a buffer reused for the next frame. */
export interface RtpMediaEvents {
  frame(pcm: Int16Array): void;
  dtmf(digit: string): void;
  /** The playout position moved (ms of agent audio heard). */
  played(ms: number): void;
  /** The first packet came from here: packets now go there. */
  latched(address: string, port: number): void;
  /** No RTP from the caller for the media timeout (time on hold not counted). */
  timedOut(silentForMs: number): void;
  socketError(message: string): void;
  /** The media is gone for good (the RTP worker stopped): the call cannot go on. */
  lost(reason: string): void;
}

export interface RtpMediaStats {
  rx: ReceiverStats;
  /** SRTP packets that failed authentication or replay checks (dropped). */
  srtpRefused?: number;
  tx: RtpSendStats;
  queuedMs: number;
  playedMs: number;
}

/** The call's side of its media, whether the packets are handled on this thread or another. */
export interface RtpMediaLink {
  readonly inputRate: number;
  play(audio: AgentAudio): void;
  /** Drops unsent audio; returns how much, ms. */
  clear(): number;
  /**
   * Queues a keypad digit as RFC 4733 events after the queued voice (dtmf-send.ts). Throws when the
   * call negotiated no telephone-event (SIP INFO carries the digit then).
   */
  sendDtmf(digit: string, toneMs: number): void;
  queuedMs(): number;
  playedMs(): number;
  update(media: NegotiatedMedia): void;
  /** Packet counts now, where they can be read synchronously (undefined across threads). */
  readonly stats: RtpMediaStats | undefined;
  /** Stops the media and frees the port; the call's packet counts (from another thread, later). */
  close(): RtpMediaStats | Promise<RtpMediaStats>;
}

/** An RTP port that can carry a call's media: on this thread (UdpRtpEndpoint) or in the RTP worker. */
export interface RtpMediaEndpoint extends RtpEndpoint {
  startMedia(opts: RtpMediaOptions, events: RtpMediaEvents): RtpMediaLink;
}

export interface RtpMediaOptions {
  media: NegotiatedMedia;
  mediaTimeoutMs: number;
  clock: Clock;
  /** Reorder window of the jitter buffer, ms (default 60). */
  reorderWindowMs?: number;
}

/** Whether we put audio on the wire, and whether the caller's silence counts toward the media timeout. */
export function sends(d: MediaDirection): boolean {
  return d === "sendrecv" || d === "sendonly";
}
export function receives(d: MediaDirection): boolean {
  return d === "sendrecv";
}
/** Whether our audio goes on the wire: never before the answer (early media). */
function transmits(m: NegotiatedMedia): boolean {
  return sends(m.direction) && !m.early;
}
/** Whether the far end's audio is passed on: early media whenever they send it. */
function hears(m: NegotiatedMedia): boolean {
  return m.early ? m.direction !== "sendonly" && m.direction !== "inactive" : receives(m.direction);
}
/** Whether their silence counts toward the media timeout (not on hold, not before the answer). */
function awaited(m: NegotiatedMedia): boolean {
  return receives(m.direction) && !m.early;
}

export class RtpCallMedia implements RtpMediaLink {
  readonly inputRate: number;
  readonly #endpoint: UdpRtpEndpoint;
  readonly #events: RtpMediaEvents;
  readonly #clock: Clock;
  readonly #mediaTimeoutMs: number;
  readonly #receiver: RtpReceiver;
  readonly #out: RtpOutbound;
  #media: NegotiatedMedia;
  /** The caller's SRTP session (libsrtp), when the call is encrypted. */
  #srtpIn: SrtpInbound | undefined;
  #srtpRefused = 0;
  #closed = false;
  #lastRx: number;
  #timeoutTimer: TimerHandle | undefined;
  readonly #onTimeoutCheck = () => this.#checkTimeout();

  constructor(endpoint: UdpRtpEndpoint, opts: RtpMediaOptions, events: RtpMediaEvents) {
    if (!(opts.mediaTimeoutMs > 0))
      throw new RangeError(`RTP media: mediaTimeoutMs must be positive, got ${opts.mediaTimeoutMs}`);
    const codec = opts.media.codec;
    this.#endpoint = endpoint;
    this.#events = events;
    this.#clock = opts.clock;
    this.#mediaTimeoutMs = opts.mediaTimeoutMs;
    this.#media = opts.media;
    this.#receiver = new RtpReceiver({
      clock: opts.clock,
      codec: codec.name,
      payloadType: codec.payloadType,
      clockRate: codec.clockRate,
      telephoneEventPt: opts.media.telephoneEventPt,
      windowMs: opts.reorderWindowMs,
      // On hold (or muted by their SDP) the caller is not talking to the agent: hold music is not speech.
      frame: (pcm) => {
        if (hears(this.#media)) events.frame(pcm);
      },
      dtmf: (digit) => events.dtmf(digit),
    });
    this.inputRate = this.#receiver.inputRate;
    this.#out = new RtpOutbound({
      clock: opts.clock,
      codec: codec.name,
      fd: endpoint.fd,
      payloadType: codec.payloadType,
      remote: opts.media.remote,
      transmitting: transmits(opts.media),
      played: (ms) => events.played(ms),
      ...(opts.media.srtp
        ? { srtp: { key: opts.media.srtp.localKey, tagBits: opts.media.srtp.tagBits } }
        : {}),
    });
    const srtp = opts.media.srtp;
    if (srtp) this.#srtpIn = rtpSender().srtpInbound(Buffer.from(srtp.remoteKey), srtp.tagBits);
    endpoint.socket.on("message", (msg, rinfo) => this.#datagram(msg, rinfo.address, rinfo.port));
    endpoint.socket.on("error", (err) => events.socketError(err.message));
    this.#lastRx = opts.clock.now();
    this.#scheduleTimeout(this.#mediaTimeoutMs);
  }

  play(audio: AgentAudio): void {
    if (!this.#closed) this.#out.play(audio);
  }

  clear(): number {
    return this.#closed ? 0 : this.#out.clear();
  }

  sendDtmf(digit: string, toneMs: number): void {
    const pt = this.#media.telephoneEventPt;
    if (pt === undefined) throw new Error("the call negotiated no telephone-event payload type");
    if (!this.#closed) this.#out.sendDtmf(digit, toneMs, pt);
  }

  queuedMs(): number {
    return this.#out.queuedMs();
  }

  playedMs(): number {
    return this.#out.playedMs();
  }

  /** The same codec (the call checks): new payload types, address or direction. */
  update(media: NegotiatedMedia): void {
    if (this.#closed) return;
    const before = this.#media;
    this.#media = media;
    this.#receiver.setPayloadTypes(media.codec.payloadType, media.telephoneEventPt);
    this.#out.update(media.codec.payloadType, media.remote, transmits(media));
    if (awaited(media) && !awaited(before)) {
      this.#lastRx = this.#clock.now();
      this.#scheduleTimeout(this.#mediaTimeoutMs);
    }
  }

  get stats(): RtpMediaStats {
    return {
      rx: this.#receiver.stats,
      tx: this.#out.stats,
      ...(this.#srtpIn ? { srtpRefused: this.#srtpRefused } : {}),
      queuedMs: Math.round(this.#out.queuedMs()),
      playedMs: Math.round(this.#out.playedMs()),
    };
  }

  close(): RtpMediaStats {
    if (!this.#closed) {
      this.#closed = true;
      this.#out.close();
      this.#clock.clearTimeout(this.#timeoutTimer);
      this.#timeoutTimer = undefined;
      this.#receiver.close();
      this.#endpoint.close();
    }
    return this.stats;
  }

  #datagram(msg: Buffer, address: string, port: number): void {
    if (this.#closed) return;
    if (this.#srtpIn) {
      // SRTCP (payload types 200-204 with the marker bit: second byte 192-223) is not read here.
      if (msg.length < 12 || ((msg[1] ?? 0) >= 192 && (msg[1] ?? 0) <= 223)) return;
      const n = rtpSender().srtpUnprotect(this.#srtpIn, msg);
      if (n < 0) {
        this.#srtpRefused++;
        return;
      }
      msg = msg.subarray(0, n);
    }
    if (!this.#receiver.handle(msg)) return;
    this.#lastRx = this.#clock.now();
    if (this.#out.latch(address, port)) this.#events.latched(address, port);
  }

  #scheduleTimeout(delayMs: number): void {
    this.#clock.clearTimeout(this.#timeoutTimer);
    this.#timeoutTimer = this.#clock.setTimeout(this.#onTimeoutCheck, delayMs);
  }

  #checkTimeout(): void {
    this.#timeoutTimer = undefined;
    if (this.#closed || !awaited(this.#media)) return;
    const silentFor = this.#clock.now() - this.#lastRx;
    if (silentFor < this.#mediaTimeoutMs) {
      this.#scheduleTimeout(this.#mediaTimeoutMs - silentFor);
      return;
    }
    this.#events.timedOut(silentFor);
  }
}
