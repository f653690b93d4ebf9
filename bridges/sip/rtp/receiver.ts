// The receive path of one call: datagram → RTP header → telephone-event digits, or audio put in
// order by the jitter buffer, decoded, losses concealed, and cut into the session's 20 ms
// frames whatever the caller's ptime (SIPp's captures are 30 ms). Anything that is not a usable
// packet of the negotiated payload types is counted and dropped, never thrown.
import { Framer } from "../../../codecs/pcm.ts";
import type { Clock } from "../../../src/core/clock.ts";
import type { SipCodecName } from "../media-port.ts";
import { DtmfDetector } from "./dtmf.ts";
import { JitterBuffer, type JitterStats } from "./jitter-buffer.ts";
import { createDecoder, type PayloadDecoder } from "./payload.ts";
import { emptyRtpHeader, parseRtp, type RtpRefusal } from "./rtp-packet.ts";

export interface ReceiverOptions {
  clock: Clock;
  codec: SipCodecName;
  payloadType: number;
  clockRate: number;
  telephoneEventPt?: number;
  /** Reorder window, ms (default 60). */
  windowMs?: number;
  /** Each 20 ms frame of caller audio at the decoder's rate (a buffer reused for the next frame). */
  frame(pcm: Int16Array): void;
  dtmf(digit: string): void;
}

export type ReceiveDrop = RtpRefusal | "payload-type" | "undecodable";

export interface ReceiverStats {
  packets: number;
  dtmfPackets: number;
  frames: number;
  concealedPackets: number;
  dropped: Record<ReceiveDrop, number>;
  jitter: JitterStats;
}

/** Lost packets concealed at most in one gap (100 ms at 20 ms ptime); a longer gap stays a gap. */
const MAX_CONCEAL_PACKETS = 5;

export class RtpReceiver {
  readonly inputRate: number;
  readonly #opts: ReceiverOptions;
  readonly #header = emptyRtpHeader();
  readonly #decoder: PayloadDecoder;
  readonly #jitter: JitterBuffer;
  readonly #dtmf = new DtmfDetector();
  readonly #framer: Framer;
  readonly #onFrame = (frame: Int16Array) => {
    this.#frames++;
    this.#opts.frame(frame);
  };
  #payloadType: number;
  #telephoneEventPt: number;
  #packets = 0;
  #dtmfPackets = 0;
  #frames = 0;
  #concealed = 0;
  readonly #dropped: Record<ReceiveDrop, number> = {
    short: 0,
    version: 0,
    padding: 0,
    extension: 0,
    rtcp: 0,
    "payload-type": 0,
    undecodable: 0,
  };

  constructor(opts: ReceiverOptions) {
    this.#opts = opts;
    this.#decoder = createDecoder(opts.codec);
    this.inputRate = this.#decoder.inputRate;
    this.#framer = new Framer(this.inputRate / 50);
    this.#payloadType = opts.payloadType;
    this.#telephoneEventPt = opts.telephoneEventPt ?? -1;
    this.#jitter = new JitterBuffer({
      clock: opts.clock,
      clockRate: opts.clockRate,
      windowMs: opts.windowMs ?? 60,
      sink: {
        packet: (payload) => this.#decoded(payload),
        lost: (count) => this.#lost(count),
        resync: () => this.#decoder.reset(),
      },
    });
  }

  /** The payload types a re-INVITE numbered (same codec). */
  setPayloadTypes(payloadType: number, telephoneEventPt: number | undefined): void {
    this.#payloadType = payloadType;
    this.#telephoneEventPt = telephoneEventPt ?? -1;
  }

  /** One datagram from the socket; true when it was a packet of the call's payload types. */
  handle(msg: Uint8Array): boolean {
    const h = this.#header;
    const refusal = parseRtp(msg, h);
    if (refusal) {
      this.#dropped[refusal]++;
      return false;
    }
    if (h.payloadType === this.#payloadType) {
      this.#packets++;
      this.#jitter.push(h.ssrc, h.sequence, h.timestamp, msg.subarray(h.payloadStart, h.payloadEnd));
      return true;
    }
    if (h.payloadType === this.#telephoneEventPt) {
      this.#dtmfPackets++;
      const digit = this.#dtmf.packet(
        h.ssrc,
        h.timestamp,
        h.marker,
        msg.subarray(h.payloadStart, h.payloadEnd),
      );
      if (digit) this.#opts.dtmf(digit);
      return true;
    }
    this.#dropped["payload-type"]++;
    return false;
  }

  get stats(): ReceiverStats {
    return {
      packets: this.#packets,
      dtmfPackets: this.#dtmfPackets,
      frames: this.#frames,
      concealedPackets: this.#concealed,
      dropped: { ...this.#dropped },
      jitter: { ...this.#jitter.stats },
    };
  }

  close(): void {
    this.#jitter.close();
  }

  #decoded(payload: Uint8Array): void {
    const pcm = this.#decoder.decode(payload);
    if (!pcm) {
      this.#dropped.undecodable++;
      return;
    }
    this.#framer.cut(pcm, this.#onFrame);
  }

  #lost(count: number): void {
    const n = Math.min(count, MAX_CONCEAL_PACKETS);
    for (let i = 0; i < n; i++) {
      const pcm = this.#decoder.conceal();
      if (pcm.length === 0) return;
      this.#concealed++;
      this.#framer.cut(pcm, this.#onFrame);
    }
  }
}
