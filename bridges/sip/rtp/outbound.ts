// The agent's voice on one call's RTP stream, sent by the native send thread (native-sender.ts):
// this side encodes and queues payloads, the thread puts one on the wire every 20 ms of the
// monotonic clock (silence between replies, so NAT bindings stay open and the caller's jitter
// buffer sees one unbroken timeline; the marker on each talkspurt's first packet), to the SDP
// address until the caller's first packet shows where they really are (symmetric RTP, RFC 4961).
// The thread sends in real time with no lead, so what was sent is what the caller has heard
// (less the network's own delay), and a clear() stops the agent within one packet.
//
// G.711 is encoded here per 20 ms frame; a reply whose length is not a whole number of frames
// keeps its tail until more audio comes, or until the queue is about to run dry, when the tail
// goes out padded with silence (the padding is part of the call's timeline, so queuedMs counts
// it). Opus packets from the TTS are queued as they are.
import { lookup } from "node:dns";
import { isIP } from "node:net";
import type { Clock, TimerHandle } from "../../../src/core/clock.ts";
import { type AgentAudio, OPUS_PACKET_MS } from "../../transport.ts";
import type { NegotiatedMedia, SipCodecName } from "../media-port.ts";
import { telephoneEventPackets } from "./dtmf-send.ts";
import { type NativeStream, type RtpSenderAddon, rtpSender } from "./native-sender.ts";
import { g711Encoder, g711SilenceByte, opusSilencePacket, ticksPer20ms } from "./payload.ts";
import { random16, random32 } from "./rtp-packet.ts";

export type RtpAddress = NegotiatedMedia["remote"];

const FRAME_MS = 20;
const G711_FRAME = 160;
/** Opus's largest packet (RFC 6716 §3.4). */
const OPUS_MAX_PACKET = 1275;
/** How often the playout position is read off the send thread to report it, ms. */
const REPORT_MS = 20;

export interface RtpOutboundOptions {
  clock: Clock;
  codec: SipCodecName;
  /** The call's bound UDP socket (Node's dgram receives on it; the thread sends on it). */
  fd: number;
  payloadType: number;
  /** Where packets go until the caller's first packet shows where they really are. */
  remote: RtpAddress;
  transmitting: boolean;
  /** The playout position moved (ms of agent audio heard). */
  played(ms: number): void;
  /** SRTP: our key (as our SDP says) and the suite's tag length; absent for plain RTP. */
  srtp?: { key: Uint8Array; tagBits: 80 | 32 };
}

export interface RtpSendStats {
  packets: number;
  sendErrors: number;
  audioPackets: number;
  silencePackets: number;
  /** Times the stream's timestamp jumped over time the sender lost. */
  underruns: number;
}

export class RtpOutbound {
  readonly #addon: RtpSenderAddon;
  readonly #stream: NativeStream;
  readonly #clock: Clock;
  readonly #opus: boolean;
  readonly #encode: ((pcm: Int16Array, out: Uint8Array) => Uint8Array) | undefined;
  readonly #played: (ms: number) => void;
  /** RTP clock ticks per 20 ms packet. */
  readonly #ticks: number;
  #payloadType: number;
  #transmitting: boolean;
  #sdpRemote: RtpAddress;
  #latched: RtpAddress | undefined;
  /** Encoded payloads of one play(), reused (grown when a play brings more). */
  #scratch = Buffer.alloc(G711_FRAME * 50);
  /** PCM of an unfinished 20 ms frame waiting for the next play(). */
  readonly #tail = new Int16Array(G711_FRAME);
  #tailLength = 0;
  #tailTimer: TimerHandle | undefined;
  #queuedMs = 0;
  #playedMs = 0;
  /** The position last reported to the call. */
  #reportedMs = 0;
  #reportTimer: TimerHandle | undefined;
  #closed: ReturnType<RtpSenderAddon["close"]> | undefined;
  readonly #onTail = () => this.#flushTail();
  readonly #onReport = () => this.#report();

  constructor(opts: RtpOutboundOptions) {
    this.#addon = rtpSender();
    this.#clock = opts.clock;
    this.#opus = opts.codec === "opus";
    this.#encode = opts.codec === "opus" ? undefined : g711Encoder(opts.codec);
    this.#played = opts.played;
    this.#ticks = ticksPer20ms(opts.codec);
    this.#payloadType = opts.payloadType;
    this.#transmitting = opts.transmitting;
    this.#sdpRemote = opts.remote;
    const silence =
      opts.codec === "opus"
        ? Buffer.from(opusSilencePacket())
        : Buffer.alloc(G711_FRAME, g711SilenceByte(opts.codec));
    this.#stream = this.#addon.open(
      opts.fd,
      {
        payloadType: opts.payloadType,
        ssrc: random32(),
        sequence: random16(),
        timestamp: random32(),
        ticks: ticksPer20ms(opts.codec),
        slotBytes: this.#opus ? OPUS_MAX_PACKET : G711_FRAME,
        transmit: 0,
      },
      silence,
      opts.srtp ? Buffer.from(opts.srtp.key) : undefined,
      opts.srtp?.tagBits,
    );
    this.#applyDestination();
  }

  /** Where packets go now. */
  get destination(): RtpAddress {
    return this.#latched ?? this.#sdpRemote;
  }

  /** A packet of the call came from here: send there from now on (first one wins). */
  latch(address: string, port: number): boolean {
    if (this.#latched || this.#closed) return false;
    this.#latched = { address, port };
    this.#applyDestination();
    return true;
  }

  /** A re-INVITE: payload type, SDP address (latched afresh when it moved) and hold state. */
  update(payloadType: number, remote: RtpAddress, transmitting: boolean): void {
    if (this.#closed) return;
    this.#payloadType = payloadType;
    this.#transmitting = transmitting;
    if (remote.address !== this.#sdpRemote.address || remote.port !== this.#sdpRemote.port) {
      this.#sdpRemote = remote;
      this.#latched = undefined;
    }
    this.#applyDestination();
  }

  play(audio: AgentAudio): void {
    if (this.#closed) return;
    if (this.#opus) {
      if (audio instanceof Int16Array)
        throw new TypeError("this SIP call plays Opus packets (its output is opus), not PCM");
      const n = audio.packets.length;
      if (n === 0) return;
      const lengths = new Uint16Array(n);
      let bytes = 0;
      for (let i = 0; i < n; i++) {
        const len = Math.min(audio.packets[i]!.length, OPUS_MAX_PACKET);
        lengths[i] = len;
        bytes += len;
      }
      const buf = this.#scratchFor(bytes);
      let at = 0;
      for (let i = 0; i < n; i++) {
        buf.set(audio.packets[i]!.subarray(0, lengths[i]), at);
        at += lengths[i]!;
      }
      this.#addon.push(this.#stream, buf.subarray(0, bytes), lengths);
      this.#queuedMs += n * OPUS_PACKET_MS;
      this.#watchPlayout();
      return;
    }
    if (!(audio instanceof Int16Array))
      throw new TypeError("this SIP call plays PCM at 8 kHz (its output is pcm), not Opus packets");
    if (audio.length === 0) return;
    this.#queuedMs += audio.length / 8;
    const total = this.#tailLength + audio.length;
    const frames = Math.floor(total / G711_FRAME);
    const buf = this.#scratchFor(frames * G711_FRAME);
    let from = 0;
    for (let f = 0; f < frames; f++) {
      let frame: Int16Array;
      if (f === 0 && this.#tailLength > 0) {
        from = G711_FRAME - this.#tailLength;
        this.#tail.set(audio.subarray(0, from), this.#tailLength);
        this.#tailLength = 0;
        frame = this.#tail;
      } else {
        frame = audio.subarray(from, from + G711_FRAME);
        from += G711_FRAME;
      }
      this.#encode!(frame, buf.subarray(f * G711_FRAME, (f + 1) * G711_FRAME));
    }
    const rest = audio.subarray(frames > 0 ? from : 0);
    this.#tail.set(rest, this.#tailLength);
    this.#tailLength += rest.length;
    const queued =
      frames > 0 ? this.#addon.push(this.#stream, buf.subarray(0, frames * G711_FRAME)) : undefined;
    if (this.#tailLength > 0) this.#scheduleTail(queued ?? this.#addon.stats(this.#stream).queued);
    this.#watchPlayout();
  }

  /**
   * Queues one keypad digit as RFC 4733 telephone-events after what is queued (the tail of the
   * voice goes first, padded); they take the voice's place on the timeline, 20 ms a packet.
   */
  sendDtmf(digit: string, toneMs: number, eventPayloadType: number): void {
    if (this.#closed) return;
    const { payloads, lengths, events } = telephoneEventPackets(digit, toneMs, this.#ticks, eventPayloadType);
    if (this.#tailLength > 0) {
      this.#clock.clearTimeout(this.#tailTimer);
      this.#flushTail();
    }
    this.#addon.push(this.#stream, payloads, lengths, events);
    this.#queuedMs += lengths.length * FRAME_MS;
    this.#watchPlayout();
  }

  /** Drops unsent audio; returns how much, ms. What was sent is heard: queuedMs() = playedMs() after. */
  clear(): number {
    if (this.#closed) return 0;
    this.#addon.clear(this.#stream);
    this.#tailLength = 0;
    this.#clock.clearTimeout(this.#tailTimer);
    this.#tailTimer = undefined;
    const sent = this.#sentMs();
    const unsent = Math.max(0, this.#queuedMs - sent);
    this.#queuedMs = Math.min(this.#queuedMs, sent);
    this.#report();
    return unsent;
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    if (this.#closed) return this.#playedMs;
    const heard = Math.min(this.#queuedMs, this.#sentMs());
    if (heard > this.#playedMs) this.#playedMs = heard;
    return this.#playedMs;
  }

  get stats(): RtpSendStats {
    const c = this.#closed ?? this.#addon.stats(this.#stream);
    return {
      packets: c.packets,
      sendErrors: c.sendErrors,
      audioPackets: c.audioPackets,
      silencePackets: c.silencePackets,
      underruns: c.skips,
    };
  }

  /** Unregisters the stream (the thread no longer touches the socket after this). */
  close(): void {
    if (this.#closed) return;
    this.playedMs();
    this.#closed = this.#addon.close(this.#stream);
    this.#clock.clearTimeout(this.#tailTimer);
    this.#clock.clearTimeout(this.#reportTimer);
    this.#tailTimer = this.#reportTimer = undefined;
  }

  #sentMs(): number {
    return this.#addon.sent(this.#stream) * FRAME_MS;
  }

  #scratchFor(bytes: number): Buffer {
    if (this.#scratch.length < bytes) this.#scratch = Buffer.alloc(Math.max(bytes, this.#scratch.length * 2));
    return this.#scratch;
  }

  /** The tail goes out padded when the packets queued before it are about to run out. */
  #scheduleTail(queuedPackets: number): void {
    this.#clock.clearTimeout(this.#tailTimer);
    this.#tailTimer = this.#clock.setTimeout(this.#onTail, Math.max(0, (queuedPackets - 1) * FRAME_MS));
  }

  #flushTail(): void {
    this.#tailTimer = undefined;
    if (this.#closed || this.#tailLength === 0) return;
    this.#tail.fill(0, this.#tailLength);
    this.#queuedMs += (G711_FRAME - this.#tailLength) / 8;
    this.#tailLength = 0;
    const buf = this.#scratchFor(G711_FRAME);
    this.#encode!(this.#tail, buf.subarray(0, G711_FRAME));
    this.#addon.push(this.#stream, buf.subarray(0, G711_FRAME));
  }

  #applyDestination(): void {
    const to = this.destination;
    const opts = { payloadType: this.#payloadType, transmit: this.#transmitting ? 1 : 0 } as const;
    if (isIP(to.address) !== 0) {
      this.#addon.update(this.#stream, opts, to.address, to.port);
      return;
    }
    // A host name in the SDP (rare): nothing goes out until it resolves.
    this.#addon.update(this.#stream, { ...opts, transmit: 0 });
    lookup(to.address, (err, address) => {
      if (err || this.#closed || this.destination !== to) return;
      this.#addon.update(this.#stream, opts, address, to.port);
    });
  }

  /** Reads the playout position every REPORT_MS while there is audio the caller has not heard. */
  #watchPlayout(): void {
    if (this.#reportTimer === undefined && !this.#closed)
      this.#reportTimer = this.#clock.setTimeout(this.#onReport, REPORT_MS);
  }

  #report(): void {
    this.#clock.clearTimeout(this.#reportTimer);
    this.#reportTimer = undefined;
    if (this.#closed) return;
    const played = this.playedMs();
    if (played !== this.#reportedMs) {
      this.#reportedMs = played;
      this.#played(played);
    }
    if (this.#playedMs < this.#queuedMs) this.#watchPlayout();
  }
}
