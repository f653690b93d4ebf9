// Lateness of received RTP against its real-time schedule: a packet stamped `ts` is due at
// (its stream's earliest arrival offset) + ts / clockRate. For each packet, transit = arrival −
// ts / rate; lateness is its transit minus the smallest transit seen so far in the stream
// (RFC 3550's relative transit time, anchored at the best packet rather than the previous one).
// A bridge that paces from a monotonic clock keeps it near 0; event-loop stalls, late timers and
// socket back-pressure show up as lateness. A new SSRC starts a new stream. Timestamps are
// unwrapped, so a stream may cross 2^32.

export class RtpLateness {
  readonly clockRate: number;
  readonly latenessMs: number[] = [];
  #ssrc = -1;
  #extTs = 0;
  #lastTs = 0;
  #minTransit = Number.POSITIVE_INFINITY;
  streams = 0;

  constructor(clockRate: number) {
    if (!(clockRate > 0)) throw new RangeError(`RtpLateness: clockRate must be positive, got ${clockRate}`);
    this.clockRate = clockRate;
  }

  /** One packet: arrival time (ms, monotonic), its RTP timestamp and SSRC. */
  add(arrivalMs: number, timestamp: number, ssrc: number): void {
    if (ssrc !== this.#ssrc) {
      this.#ssrc = ssrc;
      this.#extTs = timestamp;
      this.#minTransit = Number.POSITIVE_INFINITY;
      this.streams++;
    } else {
      this.#extTs += (timestamp - this.#lastTs) | 0;
    }
    this.#lastTs = timestamp;
    const transit = arrivalMs - (this.#extTs * 1000) / this.clockRate;
    if (transit < this.#minTransit) this.#minTransit = transit;
    this.latenessMs.push(transit - this.#minTransit);
  }
}
