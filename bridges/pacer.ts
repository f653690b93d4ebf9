// Outbound audio pacing, shared by the transports whose far side buffers what it is sent
// (Twilio Media Streams, SIP/RTP). Audio goes out in fixed frames on the monotonic clock,
// never ahead of the far side's playout by more than `leadMs`: a small lead absorbs network
// jitter, and a bounded one means a barge-in `clear` silences the caller at once instead of
// after seconds of audio already handed over.
//
// The far side's playout is modelled, not observed: it plays frames back to back in real
// time from the moment the first one arrives, and runs dry when we stop sending. So
// `playoutEnd` (when everything sent so far will have been played) advances by one frame
// per frame sent, restarting from `now` after an underrun. A late timer does not lose time:
// each wake-up sends every frame that is due ("catch-up"), so the pace follows the clock,
// not the count of timer callbacks.
import type { Clock, TimerHandle } from "../src/core/clock.ts";
import { recordTimerLateness } from "../src/core/loop-lag.ts";

export interface PacerOptions {
  clock: Clock;
  /** Samples per frame (e.g. 160 for 20 ms at 8 kHz). */
  frameSamples: number;
  /** Duration of one frame in ms (default 20). */
  frameMs?: number;
  /** Most audio allowed queued at the far side, in ms (default 200; at least one frame). */
  leadMs?: number;
  /**
   * Receives each frame as it is due. `frame` is a buffer the pacer reuses: use it before
   * returning. `samples` counts the real audio in it (a final partial frame is padded with
   * silence); `drained` is true when nothing more is queued after it.
   */
  send(frame: Int16Array, samples: number, drained: boolean): void;
  /**
   * Frames sent per wake-up once the lead is built (default 1): the pacer wakes when the far side
   * holds `leadMs − batchFrames × frameMs` and tops it up to `leadMs`. Fewer wake-ups and fewer
   * socket writes (see `flush`) at the same lead.
   */
  batchFrames?: number;
  /** Called after each wake-up or push that sent frames: e.g. to write them out in one go. */
  flush?(): void;
}

export const DEFAULT_LEAD_MS = 200;

export class Pacer {
  readonly frameSamples: number;
  readonly frameMs: number;
  readonly leadMs: number;
  readonly batchFrames: number;
  readonly #clock: Clock;
  readonly #send: PacerOptions["send"];
  readonly #flush: PacerOptions["flush"];
  /** Reused for every outgoing frame. */
  readonly #frame: Int16Array;
  /**
   * The queue: a ring of samples kept for the whole call (grown when a push does not fit, back to
   * its first size when it drains after a long reply), `#read` indexing the oldest. Pushed audio
   * waits seconds to be sent, so a copy per push would be turn-lived garbage that outlives young
   * collections and waits for a full one, with its off-heap bytes pressing for it.
   */
  #ring = EMPTY;
  #read = 0;
  #queued = 0;
  /** When the far side will have played everything sent so far (clock ms). */
  #playoutEnd = Number.NEGATIVE_INFINITY;
  #timer: TimerHandle | undefined;
  #closed = false;
  #sentFrames = 0;
  #sentSamples = 0;
  #catchUps = 0;
  #maxLateMs = 0;
  #wakeAt = 0;
  /** The timer callback, made once rather than per wake-up. */
  readonly #onWake = () => this.#wake();

  constructor(opts: PacerOptions) {
    if (!Number.isInteger(opts.frameSamples) || opts.frameSamples <= 0) {
      throw new RangeError(`Pacer: frameSamples must be a positive integer, got ${opts.frameSamples}`);
    }
    this.#clock = opts.clock;
    this.#send = opts.send;
    this.frameSamples = opts.frameSamples;
    this.frameMs = opts.frameMs ?? 20;
    this.leadMs = Math.max(this.frameMs, opts.leadMs ?? DEFAULT_LEAD_MS);
    const leadFrames = Math.max(1, Math.floor(this.leadMs / this.frameMs));
    this.batchFrames = Math.min(leadFrames, Math.max(1, Math.floor(opts.batchFrames ?? 1)));
    this.#flush = opts.flush;
    this.#frame = new Int16Array(this.frameSamples);
  }

  /** Queues audio (copied, so the caller may reuse its buffer) and sends whatever is due now. */
  push(pcm: Int16Array): void {
    if (this.#closed || pcm.length === 0) return;
    this.#enqueue(pcm);
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pump();
  }

  /**
   * Drops everything not yet sent and forgets the far side's backlog (the caller clears it there),
   * unless `farSideKeeps`: RTP cannot call back packets sent, so the caller still plays them and
   * the next frame goes after them. Returns samples dropped.
   */
  clear(farSideKeeps = false): number {
    const dropped = this.#queued;
    this.#drained();
    if (!farSideKeeps) this.#playoutEnd = Number.NEGATIVE_INFINITY;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    return dropped;
  }

  /** Stops for good: drops the queue and cancels the timer. */
  close(): void {
    this.clear();
    this.#ring = EMPTY;
    this.#closed = true;
  }

  /** Samples waiting here, not yet sent. */
  get queuedSamples(): number {
    return this.#queued;
  }

  /** Estimated ms of audio sent but not yet played at the far side. */
  get aheadMs(): number {
    return Math.max(0, this.#playoutEnd - this.#clock.now());
  }

  get stats(): { sentFrames: number; sentSamples: number; catchUps: number; maxLateMs: number } {
    return {
      sentFrames: this.#sentFrames,
      sentSamples: this.#sentSamples,
      catchUps: this.#catchUps,
      maxLateMs: this.#maxLateMs,
    };
  }

  /** While the far side holds at most this much (ms), full frames go out (it is topped up to the lead). */
  get #fullUntil(): number {
    return this.leadMs - this.frameMs;
  }

  /** The far side's holding (ms) at which the pacer wakes to top it up again. */
  get #refillAt(): number {
    return Math.max(0, this.leadMs - this.batchFrames * this.frameMs);
  }

  /**
   * A partial frame (the end of what was pushed so far) waits one frame longer than a full one for
   * the rest of its audio, then goes out padded: the last frame of an utterance keeps nearly the
   * whole lead against network jitter instead of arriving just before the far side runs dry.
   */
  get #partialUntil(): number {
    return Math.max(0, this.leadMs - (this.batchFrames + 1) * this.frameMs);
  }

  #pump(): void {
    const now = this.#clock.now();
    if (this.#playoutEnd < now) this.#playoutEnd = now;
    const sent = this.#sentFrames;
    const fullUntil = this.#fullUntil;
    while (this.#queued >= this.frameSamples && this.#playoutEnd - now <= fullUntil && !this.#closed) {
      this.#emit(this.frameSamples);
    }
    if (
      this.#queued > 0 &&
      this.#queued < this.frameSamples &&
      this.#playoutEnd - now <= this.#partialUntil
    ) {
      this.#emit(this.#queued);
    }
    if (this.#sentFrames !== sent) this.#flush?.();
    this.#schedule(now);
  }

  #schedule(now: number): void {
    if (this.#queued === 0 || this.#closed) return;
    const wakeAt =
      this.#queued >= this.frameSamples
        ? this.#playoutEnd - this.#refillAt
        : this.#playoutEnd - this.#partialUntil;
    this.#wakeAt = wakeAt;
    this.#timer = this.#clock.setTimeout(this.#onWake, Math.max(0, wakeAt - now));
  }

  #wake(): void {
    this.#timer = undefined;
    const late = this.#clock.now() - this.#wakeAt;
    recordTimerLateness(late);
    if (late > this.#maxLateMs) this.#maxLateMs = late;
    if (late >= this.frameMs) this.#catchUps++;
    this.#pump();
  }

  /** Copies `pcm` behind the queued samples, growing the ring if it does not fit. */
  #enqueue(pcm: Int16Array): void {
    const need = this.#queued + pcm.length;
    if (need > this.#ring.length) {
      const grown = new Int16Array(Math.max(need, this.#ring.length * 2, this.frameSamples * RING_FRAMES));
      this.#copyOut(grown, 0, this.#queued);
      this.#ring = grown;
      this.#read = 0;
    }
    const ring = this.#ring;
    let write = this.#read + this.#queued;
    if (write >= ring.length) write -= ring.length;
    const first = Math.min(pcm.length, ring.length - write);
    if (first === pcm.length) ring.set(pcm, write);
    else {
      ring.set(pcm.subarray(0, first), write);
      ring.set(pcm.subarray(first), 0);
    }
    this.#queued = need;
  }

  /** Copies the oldest `n` queued samples to `out` from `at`, without consuming them. */
  #copyOut(out: Int16Array, at: number, n: number): void {
    const ring = this.#ring;
    let r = this.#read;
    // An element loop, not set(subarray(…)): no view object per 20 ms frame.
    for (let i = 0; i < n; i++) {
      out[at + i] = ring[r]!;
      if (++r === ring.length) r = 0;
    }
  }

  /** The queue is empty: forget the read position, and a ring grown past its first size. */
  #drained(): void {
    this.#queued = 0;
    this.#read = 0;
    if (this.#ring.length > this.frameSamples * RING_KEEP_FRAMES) this.#ring = EMPTY;
  }

  /** Sends `samples` queued samples as one frame (zero-padding the rest). */
  #emit(samples: number): void {
    const frame = this.#frame;
    this.#copyOut(frame, 0, samples);
    if (samples < frame.length) frame.fill(0, samples);
    this.#queued -= samples;
    if (this.#queued === 0) this.#drained();
    else {
      this.#read += samples;
      if (this.#read >= this.#ring.length) this.#read -= this.#ring.length;
    }
    this.#playoutEnd += this.frameMs;
    this.#sentFrames++;
    this.#sentSamples += samples;
    this.#send(frame, samples, this.#queued === 0);
  }
}

const EMPTY = new Int16Array(0);
/** The ring's first size, in frames (1 s at 20 ms), and the most it keeps once drained (8 s). */
const RING_FRAMES = 50;
const RING_KEEP_FRAMES = 400;
