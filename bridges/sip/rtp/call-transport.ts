// One SIP call's media as the session sees it (the transport port), over RTP on the call's own
// UDP socket. Inbound: RtpReceiver turns datagrams into 20 ms frames and digits. Outbound: the
// shared Pacer releases one 20 ms packet per frame period from the monotonic clock (a lead of
// two packets absorbs a late timer), G.711 encoded per frame by lookup, Opus packets from the TTS
// sent as they are; between replies a silence packet goes out every 20 ms so NAT bindings stay
// open and the far side's jitter buffer keeps its timing. playedMs() is what the RTP send clock
// says the caller has heard: audio sent, less what is still ahead of their playout.
import type { Logger } from "../../../src/log.ts";
import type { Clock, TimerHandle } from "../../../src/session/clock.ts";
import { Pacer } from "../../pacer.ts";
import type { AgentAudio, CallInfo, OutputFormat, TransportListener } from "../../transport.ts";
import { OPUS_PACKET_MS } from "../../transport.ts";
import type {
  MediaDirection,
  NegotiatedMedia,
  SipCallControl,
  SipCallTransport,
  SipCallTransportOptions,
} from "../media-port.ts";
import { g711Encoder, g711SilenceByte, opusSilencePacket, ticksPer20ms } from "./payload.ts";
import { UdpRtpEndpoint } from "./port-pool.ts";
import { RtpReceiver } from "./receiver.ts";
import { RtpSender } from "./sender.ts";

const FRAME_MS = 20;
/** Most agent audio sent ahead of the caller's playout, ms: two packets. */
const LEAD_MS = 40;
/** Events held for a session that has not attached yet (1 s of audio). */
const EARLY_LIMIT = 50;

export interface RtpCallTuning {
  /** Reorder window of the jitter buffer, ms (default 60). */
  reorderWindowMs?: number;
}

/** Whether we put audio on the wire, and whether the caller's silence counts toward the media timeout. */
function sends(d: MediaDirection): boolean {
  return d === "sendrecv" || d === "sendonly";
}
function receives(d: MediaDirection): boolean {
  return d === "sendrecv";
}

export class RtpCallTransport implements SipCallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: OutputFormat;
  readonly #endpoint: UdpRtpEndpoint;
  readonly #control: SipCallControl;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #mediaTimeoutMs: number;
  readonly #opus: boolean;
  readonly #ticks: number;
  readonly #receiver: RtpReceiver;
  readonly #sender: RtpSender;
  readonly #pacer: Pacer;
  #media: NegotiatedMedia;
  #listener: TransportListener | undefined;
  #early: Array<{ audio: boolean; deliver: (l: TransportListener) => void }> = [];
  #earlyAudio = 0;
  #ended = false;

  // Outbound.
  readonly #encode: (pcm: Int16Array, out: Uint8Array) => Uint8Array;
  readonly #silence: Uint8Array;
  readonly #g711 = new Uint8Array(160);
  /** Opus packets waiting for their slot (the pacer queues one sample per packet). */
  #opusQueue: Uint8Array[] = [];
  #opusHead = 0;
  #queuedMs = 0;
  #sentAudioMs = 0;
  #playedMs = 0;
  #reportedMs = 0;
  /** The last packet sent was silence: the next audio starts a talkspurt (marker). */
  #quiet = true;
  #silenceDue = 0;
  #silencePackets = 0;
  #idleTimer: TimerHandle | undefined;
  readonly #onIdle = () => this.#idleTick();

  // Media timeout.
  #lastRx: number;
  #timeoutTimer: TimerHandle | undefined;
  readonly #onTimeoutCheck = () => this.#checkTimeout();

  constructor(opts: SipCallTransportOptions, tuning: RtpCallTuning = {}) {
    if (!(opts.endpoint instanceof UdpRtpEndpoint))
      throw new TypeError(
        "RtpCallTransport: the endpoint must come from UdpRtpPortPool (it owns the UDP socket)",
      );
    if (!(opts.mediaTimeoutMs > 0))
      throw new RangeError(`RtpCallTransport: mediaTimeoutMs must be positive, got ${opts.mediaTimeoutMs}`);
    const codec = opts.media.codec;
    this.info = opts.info;
    this.#endpoint = opts.endpoint;
    this.#control = opts.control;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#mediaTimeoutMs = opts.mediaTimeoutMs;
    this.#media = opts.media;
    this.#opus = codec.name === "opus";
    this.#ticks = ticksPer20ms(codec.name);
    this.output = this.#opus ? { kind: "opus" } : { kind: "pcm", rate: 8000 };
    this.#receiver = new RtpReceiver({
      clock: opts.clock,
      codec: codec.name,
      payloadType: codec.payloadType,
      clockRate: codec.clockRate,
      telephoneEventPt: opts.media.telephoneEventPt,
      windowMs: tuning.reorderWindowMs,
      frame: (pcm) => this.#frame(pcm),
      dtmf: (digit) => this.#dtmf(digit),
    });
    this.inputRate = this.#receiver.inputRate;
    this.#sender = new RtpSender(opts.endpoint.socket, codec.payloadType, opts.media.remote);
    if (codec.name === "opus") {
      this.#encode = () => {
        throw new Error("an Opus call sends the TTS's packets, not PCM");
      };
      this.#silence = opusSilencePacket();
    } else {
      this.#encode = g711Encoder(codec.name);
      this.#silence = new Uint8Array(160).fill(g711SilenceByte(codec.name));
    }
    this.#pacer = new Pacer({
      clock: opts.clock,
      frameSamples: this.#opus ? 1 : 160,
      frameMs: FRAME_MS,
      leadMs: LEAD_MS,
      send: (frame, samples, drained) => this.#sendAudio(frame, samples, drained),
    });
    const socket = opts.endpoint.socket;
    socket.on("message", (msg, rinfo) => this.#datagram(msg, rinfo.address, rinfo.port));
    socket.on("error", (err) => this.#log.warn({ err }, "RTP socket error"));
    this.#lastRx = opts.clock.now();
    this.#scheduleTimeout(this.#mediaTimeoutMs);
    this.#silenceDue = opts.clock.now();
    this.#idleTick();
    this.#log.info(
      {
        codec: codec.name,
        payloadType: codec.payloadType,
        telephoneEventPt: opts.media.telephoneEventPt,
        localPort: opts.endpoint.port,
        remote: `${opts.media.remote.address}:${opts.media.remote.port}`,
        direction: opts.media.direction,
      },
      "RTP media started",
    );
  }

  attach(listener: TransportListener): void {
    if (this.#listener) throw new Error("RtpCallTransport: attach() called twice");
    this.#listener = listener;
    const early = this.#early;
    this.#early = [];
    this.#earlyAudio = 0;
    for (const e of early) e.deliver(listener);
  }

  play(audio: AgentAudio): void {
    if (this.#ended) return;
    if (this.#opus) {
      if (audio instanceof Int16Array)
        throw new TypeError("this SIP call plays Opus packets (its output is opus), not PCM");
      const n = audio.packets.length;
      if (n === 0) return;
      for (const p of audio.packets) this.#opusQueue.push(p);
      this.#queuedMs += n * OPUS_PACKET_MS;
      this.#pacer.push(new Int16Array(n));
      return;
    }
    if (!(audio instanceof Int16Array))
      throw new TypeError("this SIP call plays PCM at 8 kHz (its output is pcm), not Opus packets");
    if (audio.length === 0) return;
    this.#queuedMs += audio.length / 8;
    this.#pacer.push(audio);
  }

  clear(): void {
    if (this.#ended) return;
    const unsent = this.#pacer.clear();
    this.#opusQueue = [];
    this.#opusHead = 0;
    // Packets already sent cannot be called back: the caller hears them, and nothing more.
    const dropped = this.#queuedMs - this.#sentAudioMs;
    this.#queuedMs = this.#sentAudioMs;
    this.#playedMs = this.#sentAudioMs;
    this.#log.info(
      { droppedMs: Math.round(dropped), unsentMs: this.#opus ? unsent * FRAME_MS : unsent / 8 },
      "clear: dropped unsent audio",
    );
    this.#scheduleIdle(0);
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    if (!this.#ended) {
      const heard = Math.min(this.#queuedMs, this.#sentAudioMs - this.#pacer.aheadMs);
      if (heard > this.#playedMs) this.#playedMs = heard;
    }
    return this.#playedMs;
  }

  async hangUp(reason: string): Promise<void> {
    if (this.#ended) return;
    this.#log.info({ reason }, "hang-up: BYE through signalling");
    await this.#hangUpThenEnd(reason, `hang-up (${reason})`);
  }

  async transfer(target: string): Promise<void> {
    if (this.#ended) throw new Error("transfer: the call has ended");
    if (target.trim() === "")
      throw new Error("transfer: the target is empty (expected a phone number or SIP URI)");
    this.#log.info({ target }, "transfer: REFER through signalling");
    await this.#control.transfer(target);
  }

  updateMedia(media: NegotiatedMedia): void {
    if (this.#ended) return;
    const before = this.#media;
    if (media.codec.name !== before.codec.name) {
      this.#log.error(
        { from: before.codec.name, to: media.codec.name },
        "re-INVITE changed the codec: not supported mid-call, keeping the first one",
      );
      return;
    }
    this.#media = media;
    this.#receiver.setPayloadTypes(media.codec.payloadType, media.telephoneEventPt);
    this.#sender.update(media.codec.payloadType, media.remote);
    if (media.direction !== before.direction) {
      this.#log.info(
        { from: before.direction, to: media.direction },
        sends(media.direction) ? "media resumed" : "media held",
      );
      if (receives(media.direction) && !receives(before.direction)) {
        this.#lastRx = this.#clock.now();
        this.#scheduleTimeout(this.#mediaTimeoutMs);
      }
    }
    if (media.remote.address !== before.remote.address || media.remote.port !== before.remote.port)
      this.#log.info(
        { remote: `${media.remote.address}:${media.remote.port}` },
        "media moved to a new address",
      );
  }

  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pacer.close();
    this.#opusQueue = [];
    this.#clock.clearTimeout(this.#idleTimer);
    this.#clock.clearTimeout(this.#timeoutTimer);
    this.#idleTimer = undefined;
    this.#timeoutTimer = undefined;
    this.#receiver.close();
    this.#endpoint.close();
    const rx = this.#receiver.stats;
    this.#log.info(
      {
        reason,
        rx: { packets: rx.packets, frames: rx.frames, concealed: rx.concealedPackets, dtmf: rx.dtmfPackets },
        rxDropped: rx.dropped,
        jitter: rx.jitter,
        tx: this.#sender.stats,
        silencePackets: this.#silencePackets,
        queuedMs: Math.round(this.#queuedMs),
        playedMs: Math.round(this.#playedMs),
        pacer: this.#pacer.stats,
      },
      "RTP media ended",
    );
    this.#deliver((l) => l.ended(reason));
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** The local port (for logs and tests). */
  get localPort(): number {
    return this.#endpoint.port;
  }

  get stats(): { rx: RtpReceiver["stats"]; tx: RtpSender["stats"]; silencePackets: number } {
    return { rx: this.#receiver.stats, tx: this.#sender.stats, silencePackets: this.#silencePackets };
  }

  // ---- inbound ----

  #datagram(msg: Buffer, address: string, port: number): void {
    if (this.#ended) return;
    if (!this.#receiver.handle(msg)) return;
    this.#lastRx = this.#clock.now();
    if (this.#sender.latch(address, port))
      this.#log.info(
        { from: `${address}:${port}` },
        "symmetric RTP: sending where the caller's packets come from",
      );
  }

  #frame(pcm: Int16Array): void {
    // On hold (or muted by their SDP) the caller is not talking to the agent: hold music is not speech.
    if (!receives(this.#media.direction)) return;
    const l = this.#listener;
    if (l) {
      l.audio(pcm);
      return;
    }
    if (this.#earlyAudio >= EARLY_LIMIT) {
      this.#early.splice(
        this.#early.findIndex((e) => e.audio),
        1,
      );
      this.#earlyAudio--;
    }
    const copy = pcm.slice();
    this.#early.push({ audio: true, deliver: (x) => x.audio(copy) });
    this.#earlyAudio++;
  }

  #dtmf(digit: string): void {
    this.#log.info({ digit }, "dtmf");
    this.#deliver((l) => l.dtmf(digit));
  }

  #deliver(event: (l: TransportListener) => void): void {
    if (this.#listener) event(this.#listener);
    else this.#early.push({ audio: false, deliver: event });
  }

  // ---- outbound ----

  #sendAudio(frame: Int16Array, samples: number, drained: boolean): void {
    const transmit = sends(this.#media.direction);
    if (this.#opus) {
      const packet = this.#opusQueue[this.#opusHead++]!;
      if (this.#opusHead === this.#opusQueue.length) {
        this.#opusQueue = [];
        this.#opusHead = 0;
      }
      this.#sender.sendPayload(packet, this.#ticks, this.#quiet, transmit);
      this.#sentAudioMs += OPUS_PACKET_MS;
    } else {
      this.#sender.sendPayload(this.#encode(frame, this.#g711), this.#ticks, this.#quiet, transmit);
      this.#sentAudioMs += samples / 8;
    }
    this.#quiet = false;
    this.#reportPlayed();
    // When the far side runs dry, silence takes over.
    if (drained) this.#scheduleIdle(this.#pacer.aheadMs);
  }

  /** Every 20 ms while the agent is quiet: a silence packet, and the playout position once it is final. */
  #idleTick(): void {
    this.#idleTimer = undefined;
    if (this.#ended || this.#pacer.queuedSamples > 0) return;
    const now = this.#clock.now();
    const ahead = this.#pacer.aheadMs;
    if (ahead > 0) {
      this.#scheduleIdle(ahead);
      return;
    }
    this.#reportPlayed();
    this.#sender.sendPayload(
      this.#silence,
      this.#ticks,
      this.#quiet && this.#silencePackets === 0,
      sends(this.#media.direction),
    );
    this.#silencePackets++;
    this.#quiet = true;
    // Keep the 20 ms cadence; after a late wake-up, restart it rather than bursting silence.
    const next = this.#silenceDue + FRAME_MS;
    this.#scheduleIdle(next > now ? next - now : FRAME_MS);
  }

  #scheduleIdle(delayMs: number): void {
    if (this.#ended) return;
    this.#clock.clearTimeout(this.#idleTimer);
    const delay = Math.max(0, delayMs);
    this.#silenceDue = this.#clock.now() + delay;
    this.#idleTimer = this.#clock.setTimeout(this.#onIdle, delay);
  }

  #reportPlayed(): void {
    const played = this.playedMs();
    if (played === this.#reportedMs) return;
    this.#reportedMs = played;
    this.#deliver((l) => l.played(played));
  }

  // ---- ending ----

  #scheduleTimeout(delayMs: number): void {
    this.#clock.clearTimeout(this.#timeoutTimer);
    this.#timeoutTimer = this.#clock.setTimeout(this.#onTimeoutCheck, delayMs);
  }

  #checkTimeout(): void {
    this.#timeoutTimer = undefined;
    if (this.#ended || !receives(this.#media.direction)) return;
    const silentFor = this.#clock.now() - this.#lastRx;
    if (silentFor < this.#mediaTimeoutMs) {
      this.#scheduleTimeout(this.#mediaTimeoutMs - silentFor);
      return;
    }
    this.#log.warn(
      { silentForMs: Math.round(silentFor) },
      "media timeout: no RTP from the caller; hanging up",
    );
    void this.#hangUpThenEnd("media timeout", "media timeout");
  }

  async #hangUpThenEnd(reason: string, endReason: string): Promise<void> {
    try {
      await this.#control.hangUp(reason);
    } catch (err) {
      this.#log.error({ err, reason }, "hang-up through signalling failed; ending the media anyway");
    } finally {
      this.end(endReason);
    }
  }
}

/** The media side's factory, for the SIP signalling to call once it has answered an INVITE. */
export function createRtpCallTransportFactory(
  tuning: RtpCallTuning = {},
): (opts: SipCallTransportOptions) => SipCallTransport {
  return (opts) => new RtpCallTransport(opts, tuning);
}
