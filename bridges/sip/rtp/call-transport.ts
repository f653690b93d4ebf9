// One SIP call's media as the session sees it (the transport port), over RTP on the call's own
// UDP socket: RtpReceiver turns datagrams into 20 ms frames and digits, RtpOutbound paces the
// agent's voice out (silence between replies). This class holds the call's life around them:
// symmetric RTP, hold and resume from re-INVITEs, the media timeout, and ending exactly once.
import type { Logger } from "../../../src/log.ts";
import type { Clock, TimerHandle } from "../../../src/session/clock.ts";
import { HeldEvents } from "../../held-events.ts";
import type { AgentAudio, CallInfo, OutputFormat, TransportListener } from "../../transport.ts";
import type {
  MediaDirection,
  NegotiatedMedia,
  SipCallControl,
  SipCallTransport,
  SipCallTransportFactory,
  SipCallTransportOptions,
} from "../media-port.ts";
import { RtpOutbound } from "./outbound.ts";
import { UdpRtpEndpoint } from "./port-pool.ts";
import { RtpReceiver } from "./receiver.ts";
import { RtpSender } from "./sender.ts";

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

/** The same digit from RTP and from INFO this close together is one press, ms. */
const DUPLICATE_DIGIT_MS = 500;

export class RtpCallTransport implements SipCallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: OutputFormat;
  readonly #endpoint: UdpRtpEndpoint;
  readonly #control: SipCallControl;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #mediaTimeoutMs: number;
  readonly #receiver: RtpReceiver;
  readonly #sender: RtpSender;
  readonly #out: RtpOutbound;
  #media: NegotiatedMedia;
  readonly #events = new HeldEvents("RtpCallTransport");
  #ended = false;
  #lastDigit: { digit: string; source: "rtp" | "info"; at: number } | undefined;

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
    this.output = codec.name === "opus" ? { kind: "opus" } : { kind: "pcm", rate: 8000 };
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
    this.#out = new RtpOutbound({
      clock: opts.clock,
      codec: codec.name,
      sender: this.#sender,
      transmitting: () => sends(this.#media.direction),
      played: (ms) => this.#deliver((l) => l.played(ms)),
    });
    const socket = opts.endpoint.socket;
    socket.on("message", (msg, rinfo) => this.#datagram(msg, rinfo.address, rinfo.port));
    socket.on("error", (err) => this.#log.warn({ err }, "RTP socket error"));
    this.#lastRx = opts.clock.now();
    this.#scheduleTimeout(this.#mediaTimeoutMs);
    this.#out.start();
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
    this.#events.attach(listener);
  }

  play(audio: AgentAudio): void {
    if (!this.#ended) this.#out.play(audio);
  }

  clear(): void {
    if (this.#ended) return;
    const droppedMs = this.#out.clear();
    this.#log.info({ droppedMs: Math.round(droppedMs) }, "clear: dropped unsent audio");
  }

  queuedMs(): number {
    return this.#out.queuedMs();
  }

  playedMs(): number {
    return this.#out.playedMs();
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
    this.#out.close();
    this.#clock.clearTimeout(this.#timeoutTimer);
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
        tx: { ...this.#sender.stats, ...this.#out.stats },
        queuedMs: Math.round(this.#out.queuedMs()),
        playedMs: Math.round(this.#out.playedMs()),
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

  get stats(): { rx: RtpReceiver["stats"]; tx: RtpSender["stats"] & RtpOutbound["stats"] } {
    return { rx: this.#receiver.stats, tx: { ...this.#sender.stats, ...this.#out.stats } };
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
    this.#events.audio(pcm);
  }

  digitFromInfo(digit: string): void {
    this.#dtmf(digit, "info");
  }

  /**
   * A PBX set to send both RFC 4733 events and INFO sends each press twice: the same digit from the
   * other source within DUPLICATE_DIGIT_MS is that press again, not a second one.
   */
  #dtmf(digit: string, source: "rtp" | "info" = "rtp"): void {
    if (this.#ended) return;
    const now = this.#clock.now();
    const last = this.#lastDigit;
    if (last && last.source !== source && last.digit === digit && now - last.at < DUPLICATE_DIGIT_MS) return;
    this.#lastDigit = { digit, source, at: now };
    this.#log.info({ digit, source }, "dtmf");
    this.#deliver((l) => l.dtmf(digit));
  }

  #deliver(event: (l: TransportListener) => void): void {
    this.#events.deliver(event);
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
export function createRtpCallTransportFactory(tuning: RtpCallTuning = {}): SipCallTransportFactory {
  return (opts) => new RtpCallTransport(opts, tuning);
}
