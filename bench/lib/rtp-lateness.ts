// Lateness of received RTP against its real-time schedule: a packet stamped `ts` is due at
// (its stream's earliest arrival offset) + ts / clockRate. For each packet, transit = arrival −
// ts / rate; lateness is its transit minus the smallest transit seen so far in the stream
// (RFC 3550's relative transit time, anchored at the best packet rather than the previous one).
// A bridge that paces from a monotonic clock keeps it near 0; event-loop stalls, late timers and
// socket back-pressure show up as lateness. A new SSRC starts a new stream. Timestamps are
// unwrapped, so a stream may cross 2^32. Given each packet's duration, it also counts holes:
// timestamps that skip past where the previous packet ended (a sender that fell behind, or
// stopped sending, inside one stream).

export class RtpLateness {
  readonly clockRate: number;
  readonly latenessMs: number[] = [];
  #ssrc = -1;
  #extTs = 0;
  #lastTs = 0;
  #minTransit = Number.POSITIVE_INFINITY;
  /** Where the previous packet ended (unwrapped), when its duration was given. */
  #expectedTs = Number.NaN;
  streams = 0;
  holes = 0;
  holeMs = 0;
  lastHoleMs = 0;

  readonly #keep: boolean;

  /** `keep: false` (long runs): latenessMs stays empty; add() returns each packet's figure instead. */
  constructor(clockRate: number, opts: { keep?: boolean } = {}) {
    if (!(clockRate > 0)) throw new RangeError(`RtpLateness: clockRate must be positive, got ${clockRate}`);
    this.clockRate = clockRate;
    this.#keep = opts.keep !== false;
  }

  /**
   * One packet: arrival time (ms, monotonic), its RTP timestamp and SSRC, and its duration (ticks)
   * if known. Returns its lateness, ms; `lastHoleMs` is what its timestamp skipped (0 if nothing).
   */
  add(arrivalMs: number, timestamp: number, ssrc: number, durationTicks?: number): number {
    this.lastHoleMs = 0;
    if (ssrc !== this.#ssrc) {
      this.#ssrc = ssrc;
      this.#extTs = timestamp;
      this.#minTransit = Number.POSITIVE_INFINITY;
      this.#expectedTs = Number.NaN;
      this.streams++;
    } else {
      this.#extTs += (timestamp - this.#lastTs) | 0;
    }
    this.#lastTs = timestamp;
    if (this.#extTs > this.#expectedTs) {
      this.holes++;
      this.lastHoleMs = ((this.#extTs - this.#expectedTs) * 1000) / this.clockRate;
      this.holeMs += this.lastHoleMs;
    }
    if (durationTicks !== undefined) {
      const end = this.#extTs + durationTicks;
      // The furthest end so far (a reordered packet does not move it back; NaN before the first).
      if (!(end <= this.#expectedTs)) this.#expectedTs = end;
    }
    const transit = arrivalMs - (this.#extTs * 1000) / this.clockRate;
    if (transit < this.#minTransit) this.#minTransit = transit;
    const late = transit - this.#minTransit;
    if (this.#keep) this.latenessMs.push(late);
    return late;
  }
}
