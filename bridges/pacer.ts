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
import type { Clock, TimerHandle } from "../src/session/clock.ts";

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
  /** Queued chunks (copies of what was pushed); `#head` indexes the oldest, `#offset` into it. */
  #chunks: Int16Array[] = [];
  #head = 0;
  #offset = 0;
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
    this.#chunks.push(pcm.slice());
    this.#queued += pcm.length;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#pump();
  }

  /** Drops everything not yet sent and forgets the far side's backlog (the caller clears it there). Returns samples dropped. */
  clear(): number {
    const dropped = this.#queued;
    this.#chunks = [];
    this.#head = 0;
    this.#offset = 0;
    this.#queued = 0;
    this.#playoutEnd = Number.NEGATIVE_INFINITY;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    return dropped;
  }

  /** Stops for good: drops the queue and cancels the timer. */
  close(): void {
    this.clear();
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
    this.#timer = this.#clock.setTimeout(() => this.#wake(), Math.max(0, wakeAt - now));
  }

  #wake(): void {
    this.#timer = undefined;
    const late = this.#clock.now() - this.#wakeAt;
    if (late > this.#maxLateMs) this.#maxLateMs = late;
    if (late >= this.frameMs) this.#catchUps++;
    this.#pump();
  }

  /** Copies `samples` queued samples into the frame (zero-padding the rest) and sends it. */
  #emit(samples: number): void {
    const frame = this.#frame;
    let filled = 0;
    while (filled < samples) {
      const chunk = this.#chunks[this.#head]!;
      const take = Math.min(samples - filled, chunk.length - this.#offset);
      frame.set(chunk.subarray(this.#offset, this.#offset + take), filled);
      filled += take;
      this.#offset += take;
      if (this.#offset === chunk.length) {
        this.#chunks[this.#head] = EMPTY;
        this.#head++;
        this.#offset = 0;
      }
    }
    if (filled < frame.length) frame.fill(0, filled);
    this.#queued -= samples;
    if (this.#queued === 0) {
      this.#chunks.length = 0;
      this.#head = 0;
    } else if (this.#head > 64 && this.#head * 2 > this.#chunks.length) {
      this.#chunks = this.#chunks.slice(this.#head);
      this.#head = 0;
    }
    this.#playoutEnd += this.frameMs;
    this.#sentFrames++;
    this.#sentSamples += samples;
    this.#send(frame, samples, this.#queued === 0);
  }
}

const EMPTY = new Int16Array(0);
