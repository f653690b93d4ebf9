// The media half of a benchmark SIP call, whichever side placed it (sip-uac.ts calls the bridge,
// sip-uas.ts answers the bridge's calls): the caller's audio as RTP at 20 ms, paced from the
// monotonic clock with catch-up, from the answer on; every agent packet timed against its
// real-time schedule (rtp-lateness.ts). A packet's arrival is the kernel's receive stamp
// (SIOCGSTAMPNS through the RTP addon; on loopback, the moment the bridge sent it), so a load
// generator whose event loop reads late does not count its own delay as the bridge's; the time it
// was read is timed too (`readLatenessMs`). SRTP: our packets protected by libsrtp (the addon the
// bridge uses); the agent's are timed by their headers, which SRTP leaves in clear.
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { rtpSender } from "../../bridges/sip/rtp/native-sender.ts";
import type { BoundSocket } from "../../bridges/sip/rtp/port-pool.ts";
import { buildRtp, emptyRtpHeader, parseRtp } from "../../bridges/sip/rtp/rtp-packet.ts";
import { alawEncode, mulawEncode } from "../../codecs/g711.ts";
import { performanceMsOf } from "./monotonic-clock.ts";
import { RtpLateness } from "./rtp-lateness.ts";

export interface BenchMediaOptions {
  codec: "pcmu" | "pcma";
  /** What the caller says: mono 8 kHz, sent from the answer on. */
  caller: Int16Array;
  /** Call length from the answer, s (no audio is sent past it). */
  seconds: number;
  /** Our SDES key (30 bytes): packets protected, agent packets carry a 10-byte tag. */
  srtpKey?: Buffer | undefined;
  /** Keep per-packet records (arrivals, lateness); false hears them through `onPacket` only. */
  keep: boolean;
  /**
   * Each agent packet: epoch ms of arrival, its lateness (ms), the ms its timestamp skipped, and
   * its lateness by the time this process read it (the same figure plus our own loop's delay).
   */
  onPacket?:
    | ((atEpochMs: number, latenessMs: number, holeMs: number, readLatenessMs: number) => void)
    | undefined;
}

/** What the media adds to a call's report. */
export interface BenchMediaCounts {
  rtpSent: number;
  rtpReceived: number;
  /** Arrival of each received RTP packet, ms since the answer. */
  arrivalsMs: number[];
  latenessMs: number[];
  streams: number;
  holes: number;
  holeMs: number;
}

export class BenchCallMedia {
  readonly #socket: dgram.Socket;
  readonly #o: BenchMediaOptions;
  readonly #counts: BenchMediaCounts;
  readonly #lateness: RtpLateness;
  readonly #readLateness = new RtpLateness(8000, { keep: false });
  readonly #srtpOut: ReturnType<ReturnType<typeof rtpSender>["srtpOutbound"]> | undefined;
  #answeredAt = Number.NaN;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(rtp: BoundSocket, o: BenchMediaOptions, counts: BenchMediaCounts) {
    const { socket, fd } = rtp;
    this.#socket = socket;
    this.#o = o;
    this.#counts = counts;
    this.#lateness = new RtpLateness(8000, { keep: o.keep });
    const addon = rtpSender();
    this.#srtpOut = o.srtpKey ? addon.srtpOutbound(o.srtpKey, 80) : undefined;
    const tagBytes = o.srtpKey ? 10 : 0;
    const h = emptyRtpHeader();
    addon.rxStampMs(fd); // turns the socket's receive stamps on
    socket.on("message", (msg) => {
      const read = performance.now();
      if (parseRtp(msg, h)) return;
      if (Number.isNaN(this.#answeredAt)) return;
      // Still this message's stamp: nothing was read from the socket since it.
      // NaN only for a packet that came before stamping was on: then its read time stands in.
      const stamped = performanceMsOf(addon.rxStampMs(fd));
      const now = Number.isNaN(stamped) ? read : stamped;
      counts.rtpReceived++;
      if (o.keep) counts.arrivalsMs.push(now - this.#answeredAt);
      // G.711: one byte per sample, so a payload lasts its length in 8 kHz ticks.
      const ticks = h.payloadEnd - h.payloadStart - tagBytes;
      const late = this.#lateness.add(now, h.timestamp, h.ssrc, ticks);
      if (!o.onPacket) return;
      const readLate = this.#readLateness.add(read, h.timestamp, h.ssrc, ticks);
      o.onPacket(performance.timeOrigin + now, late, this.#lateness.lastHoleMs, readLate);
    });
  }

  /** performance.now() of the answer (NaN before it). */
  get answeredAt(): number {
    return this.#answeredAt;
  }

  /** The call is answered: the caller's audio starts going to `to`. */
  start(to: { address: string; port: number }): void {
    this.#answeredAt = performance.now();
    const o = this.#o;
    const frames = Math.floor(Math.min(o.caller.length, o.seconds * 8000) / 160);
    const encode = o.codec === "pcmu" ? mulawEncode : alawEncode;
    const pt = o.codec === "pcmu" ? 0 : 8;
    const ssrc = randomBytes(4).readUInt32BE(0);
    const seq0 = randomBytes(2).readUInt16BE(0);
    const ts0 = randomBytes(4).readUInt32BE(0);
    const payload = new Uint8Array(160);
    let i = 0;
    const pump = () => {
      this.#timer = undefined;
      if (this.#stopped) return;
      // Catch-up: every frame due by now goes, so a late timer costs no audio time.
      const due = Math.floor((performance.now() - this.#answeredAt) / 20) + 1;
      while (i < Math.min(due, frames)) {
        encode(o.caller.subarray(i * 160, (i + 1) * 160), payload);
        const packet = buildRtp({
          payloadType: pt,
          sequence: (seq0 + i) & 0xffff,
          timestamp: (ts0 + i * 160) >>> 0,
          ssrc,
          payload,
          marker: i === 0,
        });
        if (this.#srtpOut) {
          // A buffer per packet: dgram sends later, so one reused buffer would be overwritten.
          const wire = Buffer.alloc(packet.length + 16);
          wire.set(packet);
          const n = rtpSender().srtpProtect(this.#srtpOut, wire, packet.length);
          this.#socket.send(wire.subarray(0, n), to.port, to.address);
        } else this.#socket.send(packet, to.port, to.address);
        this.#counts.rtpSent++;
        i++;
      }
      if (i < frames)
        this.#timer = setTimeout(pump, Math.max(0, this.#answeredAt + i * 20 - performance.now()));
    };
    pump();
  }

  /** No more audio from us (the call is ending). */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  /** The lateness figures into the report (at the call's end). */
  finish(): void {
    this.stop();
    this.#counts.latenessMs = this.#lateness.latenessMs;
    this.#counts.streams = this.#lateness.streams;
    this.#counts.holes = this.#lateness.holes;
    this.#counts.holeMs = this.#lateness.holeMs;
  }
}

/** A UDP socket bound on `address` (port 0: any free one). */
export function bound(address: string, port = 0): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket("udp4");
    s.once("error", reject);
    s.bind(port, address, () => {
      s.off("error", reject);
      resolve(s);
    });
  });
}

export function close(s: dgram.Socket): Promise<void> {
  return new Promise((r) => s.close(() => r()));
}

/** A call's timers: each forgotten once it fired, all cleared when the call is over. */
export class CallTimers {
  readonly #live = new Set<NodeJS.Timeout>();

  later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.#live.delete(t);
      fn();
    }, ms);
    this.#live.add(t);
    return t;
  }

  cancel(t: NodeJS.Timeout | undefined): void {
    if (!t) return;
    clearTimeout(t);
    this.#live.delete(t);
  }

  clearAll(): void {
    for (const t of this.#live) clearTimeout(t);
    this.#live.clear();
  }
}
