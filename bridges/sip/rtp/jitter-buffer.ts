// Inbound RTP put back in order for one call. Packets are released as soon as they are next
// in sequence, so an orderly stream passes straight through with no added delay; a packet that
// arrives ahead of a gap waits until the gap fills, or until the packets held span more than the
// reorder window (in stream time) or that long has passed on the clock, and then the gap is
// declared lost for the sink to conceal. Sequence numbers (16 bits) and timestamps (32 bits) are
// unwrapped against the newest packet, so wrap-around is just the next number. A packet from
// before the release point is dropped: a duplicate if it was released, late if it was given up
// as lost. A new SSRC (or a jump too far to be reordering) releases what was held and resyncs.
import type { Clock, TimerHandle } from "../../../src/core/clock.ts";

export interface JitterSink {
  /** The next packet in order; `timestamp` is unwrapped (RTP clock units from the stream's start). */
  packet(payload: Uint8Array, timestamp: number): void;
  /** `count` packets before the next one never came (the sink conceals them). */
  lost(count: number): void;
  /** A new stream starts (new SSRC or a jump): the sink forgets the previous one's state. */
  resync(): void;
}

export interface JitterBufferOptions {
  clock: Clock;
  /** RTP clock rate of the payload (8000 G.711, 48000 Opus). */
  clockRate: number;
  /** Most stream time held waiting for a missing packet, ms (default 60). */
  windowMs?: number;
  sink: JitterSink;
}

export interface JitterStats {
  released: number;
  lost: number;
  duplicates: number;
  late: number;
  resyncs: number;
  reordered: number;
}

interface Held {
  seq: number;
  timestamp: number;
  payload: Uint8Array;
}

/** A sequence jump beyond this is a restarted stream, not reordering or loss. */
const MAX_GAP = 3000;
/** Released sequence numbers remembered, to tell a duplicate from a late packet. */
const HISTORY = 128;

export class JitterBuffer {
  readonly windowMs: number;
  readonly #clock: Clock;
  readonly #sink: JitterSink;
  readonly #windowTicks: number;
  #ssrc = -1;
  /** Newest sequence and timestamp seen, unwrapped, and their 16/32-bit forms. */
  #maxSeq = 0;
  #maxTs = 0;
  /** The sequence number to release next (unwrapped). */
  #next = 0;
  /** Unwrapped timestamp of the last released packet. */
  #lastTs = 0;
  /** Held packets, sorted by sequence. */
  #held: Held[] = [];
  readonly #history = new Float64Array(HISTORY).fill(-1);
  #timer: TimerHandle | undefined;
  readonly #onTimer = () => {
    this.#timer = undefined;
    this.#releaseHeld();
  };
  readonly stats: JitterStats = { released: 0, lost: 0, duplicates: 0, late: 0, resyncs: 0, reordered: 0 };

  constructor(opts: JitterBufferOptions) {
    if (!(opts.clockRate > 0))
      throw new RangeError(`JitterBuffer: clockRate must be positive, got ${opts.clockRate}`);
    this.#clock = opts.clock;
    this.#sink = opts.sink;
    this.windowMs = opts.windowMs ?? 60;
    this.#windowTicks = (this.windowMs * opts.clockRate) / 1000;
  }

  /** Packets held waiting for a gap to fill. */
  get holding(): number {
    return this.#held.length;
  }

  push(ssrc: number, sequence: number, timestamp: number, payload: Uint8Array): void {
    if (ssrc !== this.#ssrc) {
      this.#restart(ssrc, sequence, timestamp);
    }
    const seq = this.#maxSeq + (((sequence - this.#maxSeq) << 16) >> 16);
    const ts = this.#maxTs + ((timestamp - this.#maxTs) | 0);
    if (seq - this.#next > MAX_GAP || this.#next - seq > MAX_GAP) {
      this.#restart(ssrc, sequence, timestamp);
      this.#push(this.#maxSeq, this.#maxTs, payload);
      return;
    }
    if (seq > this.#maxSeq) {
      this.#maxSeq = seq;
      this.#maxTs = ts;
    }
    this.#push(seq, ts, payload);
  }

  /** Releases everything held (the stream stopped, or the call ends). */
  flush(): void {
    this.#releaseHeld();
  }

  close(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held = [];
  }

  #push(seq: number, ts: number, payload: Uint8Array): void {
    if (seq < this.#next) {
      if (this.#history[seq % HISTORY] === seq) this.stats.duplicates++;
      else this.stats.late++;
      return;
    }
    if (seq === this.#next) {
      this.#release(seq, ts, payload);
      this.#drainInOrder();
      return;
    }
    const held = this.#held;
    let i = held.length;
    while (i > 0 && held[i - 1]!.seq > seq) i--;
    if (i > 0 && held[i - 1]!.seq === seq) {
      this.stats.duplicates++;
      return;
    }
    if (i < held.length) this.stats.reordered++;
    held.splice(i, 0, { seq, timestamp: ts, payload });
    // Give up on the gap once the packets waiting behind it span the window.
    while (held.length > 0 && held[held.length - 1]!.timestamp - this.#lastTs > this.#windowTicks) {
      this.#skipToHeld();
      this.#drainInOrder();
    }
    if (held.length > 0 && !this.#timer) this.#timer = this.#clock.setTimeout(this.#onTimer, this.windowMs);
    else if (held.length === 0) this.#stopTimer();
  }

  #release(seq: number, ts: number, payload: Uint8Array): void {
    this.#history[seq % HISTORY] = seq;
    this.#next = seq + 1;
    this.#lastTs = ts;
    this.stats.released++;
    this.#sink.packet(payload, ts);
  }

  /** Releases held packets that are now next in order. */
  #drainInOrder(): void {
    const held = this.#held;
    let n = 0;
    while (n < held.length && held[n]!.seq === this.#next) {
      const h = held[n]!;
      this.#release(h.seq, h.timestamp, h.payload);
      n++;
    }
    if (n > 0) held.splice(0, n);
    if (held.length === 0) this.#stopTimer();
  }

  /** Declares the gap before the first held packet lost and releases it. */
  #skipToHeld(): void {
    const first = this.#held.shift()!;
    const missing = first.seq - this.#next;
    this.stats.lost += missing;
    this.#sink.lost(missing);
    this.#release(first.seq, first.timestamp, first.payload);
  }

  #releaseHeld(): void {
    while (this.#held.length > 0) {
      this.#skipToHeld();
      this.#drainInOrder();
    }
    this.#stopTimer();
  }

  #stopTimer(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** A new stream: release what the old one left, and start numbering from this packet. */
  #restart(ssrc: number, sequence: number, timestamp: number): void {
    const first = this.#ssrc === -1;
    this.#releaseHeld();
    this.#ssrc = ssrc;
    // Unwrapped numbers start one cycle up, so a reordered packet just before the first stays positive.
    this.#maxSeq = 0x10000 + sequence;
    this.#maxTs = 0x1_0000_0000 + timestamp;
    this.#next = this.#maxSeq;
    this.#lastTs = this.#maxTs;
    this.#history.fill(-1);
    if (!first) {
      this.stats.resyncs++;
      this.#sink.resync();
    }
  }
}
