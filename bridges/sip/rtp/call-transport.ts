// One SIP call's media as the session sees it (the transport port). The packets themselves are
// handled by the call's media link (call-media.ts): on this thread, or in the RTP worker when the
// port came from it. This class holds the call's life around them: what is heard before the
// session attaches, hold and resume from re-INVITEs, keypad digits from RTP and INFO, the media
// timeout's hang-up, and ending exactly once.
import type { Logger } from "../../../src/core/log.ts";
import { HeldEvents } from "../../held-events.ts";
import type { AgentAudio, CallInfo, OutputFormat, TransportListener } from "../../transport.ts";
import type {
  NegotiatedMedia,
  SipCallControl,
  SipCallTransport,
  SipCallTransportFactory,
  SipCallTransportOptions,
} from "../media-port.ts";
import { type RtpMediaEndpoint, type RtpMediaLink, type RtpMediaStats, sends } from "./call-media.ts";

export interface RtpCallTuning {
  /** Reorder window of the jitter buffer, ms (default 60). */
  reorderWindowMs?: number;
}

/** The same digit from RTP and from INFO this close together is one press, ms. */
const DUPLICATE_DIGIT_MS = 500;

function isMediaEndpoint(e: SipCallTransportOptions["endpoint"]): e is RtpMediaEndpoint {
  return typeof (e as Partial<RtpMediaEndpoint>).startMedia === "function";
}

export class RtpCallTransport implements SipCallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: OutputFormat;
  /** The local port (for logs and tests). */
  readonly localPort: number;
  readonly #control: SipCallControl;
  readonly #clock: SipCallTransportOptions["clock"];
  readonly #log: Logger;
  readonly #link: RtpMediaLink;
  #media: NegotiatedMedia;
  readonly #events = new HeldEvents("RtpCallTransport");
  #ended = false;
  #lastDigit: { digit: string; source: "rtp" | "info"; at: number } | undefined;
  #finalStats: RtpMediaStats | undefined;
  /** Where early media's frames go until the answer's media replaces it. */
  #earlyAudio: ((pcm: Int16Array) => void) | undefined;
  /** Digits sent as RFC 4733 events, each waiting for the playout to pass its end. */
  #digitsOut: Array<{ endMs: number; done: (err?: Error) => void }> = [];
  /** The agent's keys: RFC 4733 events where the SDP agreed telephone-event, else INFO. */
  readonly dtmfOut = {
    kind: "signal",
    send: (digit: string, toneMs: number) => this.#sendDigit(digit, toneMs),
  } as const;

  constructor(opts: SipCallTransportOptions, tuning: RtpCallTuning = {}) {
    const endpoint = opts.endpoint;
    if (!isMediaEndpoint(endpoint))
      throw new TypeError(
        "RtpCallTransport: the endpoint must come from an RTP port pool (UdpRtpPortPool or the RTP worker's)",
      );
    const codec = opts.media.codec;
    this.info = opts.info;
    this.#control = opts.control;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#media = opts.media;
    this.#earlyAudio = opts.media.early ? opts.earlyAudio : undefined;
    this.output = codec.name === "opus" ? { kind: "opus" } : { kind: "pcm", rate: 8000 };
    this.#link = endpoint.startMedia(
      {
        media: opts.media,
        mediaTimeoutMs: opts.mediaTimeoutMs,
        clock: opts.clock,
        ...(tuning.reorderWindowMs !== undefined ? { reorderWindowMs: tuning.reorderWindowMs } : {}),
      },
      {
        // Early media is for whoever listens before the answer (the outbound detector), never the session.
        frame: (pcm) => (this.#media.early ? this.#earlyAudio?.(pcm) : this.#events.audio(pcm)),
        dtmf: (digit) => this.#dtmf(digit),
        played: (ms) => {
          this.#digitsSent(ms);
          this.#deliver((l) => l.played(ms));
        },
        latched: (address, port) =>
          this.#log.info(
            { from: `${address}:${port}` },
            "symmetric RTP: sending where the caller's packets come from",
          ),
        timedOut: (silentForMs) => this.#timedOut(silentForMs),
        socketError: (message) => this.#log.warn({ err: message }, "RTP socket error"),
        lost: (reason) => {
          if (this.#ended) return;
          this.#log.error({ reason }, "RTP media lost; hanging up");
          void this.#hangUpThenEnd(reason, "media lost");
        },
      },
    );
    this.inputRate = this.#link.inputRate;
    this.#log.info(
      {
        codec: codec.name,
        payloadType: codec.payloadType,
        telephoneEventPt: opts.media.telephoneEventPt,
        localPort: endpoint.port,
        remote: `${opts.media.remote.address}:${opts.media.remote.port}`,
        direction: opts.media.direction,
        ...(opts.media.early ? { early: true } : {}),
      },
      opts.media.early ? "RTP early media started (heard, nothing sent)" : "RTP media started",
    );
    this.localPort = endpoint.port;
  }

  attach(listener: TransportListener): void {
    this.#events.attach(listener);
  }

  play(audio: AgentAudio): void {
    if (!this.#ended) this.#link.play(audio);
  }

  clear(): void {
    if (this.#ended) return;
    const droppedMs = this.#link.clear();
    this.#digitsSent(
      Number.POSITIVE_INFINITY,
      new Error("the digit was dropped with the agent's unheard audio"),
    );
    this.#log.info({ droppedMs: Math.round(droppedMs) }, "clear: dropped unsent audio");
  }

  queuedMs(): number {
    return this.#link.queuedMs();
  }

  playedMs(): number {
    return this.#link.playedMs();
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
        before.early
          ? "the answer's codec differs from the early media's: not supported, keeping the first one"
          : "re-INVITE changed the codec: not supported mid-call, keeping the first one",
      );
      // The answer still ends the early state: the call goes on, in the early media's codec.
      if (!before.early) return;
      media = { ...media, codec: before.codec };
    }
    this.#media = media;
    this.#link.update(media);
    if (before.early && !media.early) {
      this.#earlyAudio = undefined;
      this.#log.info(
        { remote: `${media.remote.address}:${media.remote.port}`, direction: media.direction },
        "early media answered: the call's media from now on",
      );
      return;
    }
    if (media.direction !== before.direction)
      this.#log.info(
        { from: before.direction, to: media.direction },
        sends(media.direction) ? "media resumed" : "media held",
      );
    if (media.remote.address !== before.remote.address || media.remote.port !== before.remote.port)
      this.#log.info(
        { remote: `${media.remote.address}:${media.remote.port}` },
        "media moved to a new address",
      );
  }

  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    const stats = this.#link.close();
    if (stats instanceof Promise)
      stats.then(
        (counted) => this.#logEnd(reason, counted),
        (err: unknown) => this.#log.error({ err, reason }, "RTP media ended, its counts were lost"),
      );
    else this.#logEnd(reason, stats);
    this.#digitsSent(Number.POSITIVE_INFINITY, new Error(`the call ended (${reason})`));
    this.#deliver((l) => l.ended(reason));
  }

  get ended(): boolean {
    return this.#ended;
  }

  /**
   * The media's packet counts: live where the packets are handled on this thread; from the RTP
   * worker, as they were when the media closed.
   */
  get stats(): RtpMediaStats {
    const stats = this.#link.stats ?? this.#finalStats;
    if (!stats)
      throw new Error("RtpCallTransport.stats: the RTP worker reports counts when the call's media closes");
    return stats;
  }

  async #sendDigit(digit: string, toneMs: number): Promise<void> {
    if (this.#ended) throw new Error("the call has ended");
    if (this.#media.telephoneEventPt === undefined) {
      const info = this.#control.dtmfInfo;
      if (!info) throw new Error("the call negotiated no telephone-event, and its signalling sends no INFO");
      this.#log.info({ digit, via: "info" }, "sending a keypad digit");
      await info(digit, toneMs);
      return;
    }
    this.#log.info({ digit, via: "rfc4733" }, "sending a keypad digit");
    this.#link.sendDtmf(digit, toneMs);
    const endMs = this.#link.queuedMs();
    if (this.#link.playedMs() >= endMs) return;
    await new Promise<void>((resolve, reject) =>
      this.#digitsOut.push({ endMs, done: (err) => (err ? reject(err) : resolve()) }),
    );
  }

  /** The playout reached `playedMs`: the digits whose packets have all gone out are sent. */
  #digitsSent(playedMs: number, err?: Error): void {
    if (this.#digitsOut.length === 0) return;
    this.#digitsOut = this.#digitsOut.filter((d) => {
      if (playedMs < d.endMs) return true;
      d.done(err);
      return false;
    });
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

  #logEnd(reason: string, stats: RtpMediaStats): void {
    this.#finalStats = stats;
    const { rx, tx } = stats;
    this.#log.info(
      {
        reason,
        rx: { packets: rx.packets, frames: rx.frames, concealed: rx.concealedPackets, dtmf: rx.dtmfPackets },
        rxDropped: rx.dropped,
        ...(stats.srtpRefused !== undefined ? { srtpRefused: stats.srtpRefused } : {}),
        jitter: rx.jitter,
        tx,
        queuedMs: stats.queuedMs,
        playedMs: stats.playedMs,
      },
      "RTP media ended",
    );
  }

  #timedOut(silentForMs: number): void {
    if (this.#ended) return;
    this.#log.warn(
      { silentForMs: Math.round(silentForMs) },
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
