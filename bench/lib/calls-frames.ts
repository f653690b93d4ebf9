// What the caller side of one call tells about the bridge's outbound pacing, from the arrival
// times of its agent media frames (20 ms each) at the simulated Twilio.
//
// The simulated line plays like Twilio: frames back to back in real time from the moment one
// arrives while nothing is playing, so it has a playout end P (when all audio received so far
// will have been played): P = max(P, arrival) + 20 ms per frame, and a `clear` drops what is
// unplayed (P = the clear's time).
//
// A *stretch* is a run of frames during which the line never ran dry: it starts with a call's
// first frame, the first frame after a clear, or a frame that arrives after P (the line was
// silent when it came).
//
// Lateness (frame_lateness_ms): inside a stretch, frame j (j = 0 for its first frame) arriving
// at t_j is due by the stretch's real-time schedule s_j = min over k ≤ j of (t_k + 20·(j − k)):
// the earliest time at which some earlier frame, followed at the real-time rate, says frame j
// could be there. lateness_j = t_j − s_j ≥ 0. A bridge that paces from a monotonic clock with
// catch-up keeps it at 0 once its lead is built (the pacer sends 200 ms ahead, then one frame per
// 20 ms); event-loop stalls, late timers, socket back-pressure in the bridge (and scheduling
// delays of the load generator receiving the frames) show up as lateness. It is 0 by definition
// for the first frame of a stretch: an underrun is counted as gap frames instead.
//
// Gap frames (the outbound part of dropped_frames): when a frame arrives after the line ran
// dry, and the dry spell is inside one agent utterance — shorter than `maxGapMs`, with no clear
// and no caller speech starting since the previous frame (replies follow caller speech;
// re-prompts come after 8 s of silence) — the caller heard a hole: ceil(dry / 20 ms) frame
// slots of silence in a 20 ms-clocked playout.

export interface FrameAnalysisOptions {
  /** `clear` messages received, ms since the start of the stream, ascending. */
  clearsMs: readonly number[];
  /** Where caller utterances started, ms since the start of the stream, ascending. */
  callerSpeechStartsMs: readonly number[];
  frameMs?: number;
  /** Longest dry spell still counted as a hole inside an utterance (default 2000 ms). */
  maxGapMs?: number;
}

export interface FrameAnalysis {
  frames: number;
  /** Per frame, in arrival order, ms. */
  latenessMs: number[];
  stretches: number;
  /** Dry spells inside utterances, and the 20 ms slots of silence they made. */
  gaps: number;
  gapFrames: number;
}

/**
 * The same analysis fed one event at a time, in arrival order (a long run keeps no per-frame
 * array): `clear(t)` for each clear, `frame(t)` for each agent frame, which returns the frame's
 * lateness; gaps and gapFrames accumulate. Caller speech starts are given ahead (a load
 * generator knows its own timeline) or with `callerSpeech(t)` before any frame after them.
 */
export class AgentFrameTimer {
  readonly #frameMs: number;
  readonly #maxGapMs: number;
  readonly #speech: number[];
  #speechIdx = 0;
  #playoutEnd = Number.NEGATIVE_INFINITY;
  #prev = Number.NEGATIVE_INFINITY;
  #j = 0;
  #minOffset = 0;
  #cleared = false;
  frames = 0;
  stretches = 0;
  gaps = 0;
  gapFrames = 0;

  constructor(opts: { callerSpeechStartsMs?: readonly number[]; frameMs?: number; maxGapMs?: number } = {}) {
    this.#frameMs = opts.frameMs ?? 20;
    this.#maxGapMs = opts.maxGapMs ?? 2000;
    this.#speech = [...(opts.callerSpeechStartsMs ?? [])];
  }

  callerSpeech(t: number): void {
    this.#speech.push(t);
  }

  clear(t: number): void {
    if (t < this.#prev) return;
    this.#cleared = true;
    if (this.#playoutEnd > t) this.#playoutEnd = t;
  }

  frame(t: number): number {
    const dry = t > this.#playoutEnd;
    if (this.frames === 0 || this.#cleared || dry) {
      if (this.frames > 0 && !this.#cleared && dry) {
        const silentMs = t - this.#playoutEnd;
        if (silentMs < this.#maxGapMs && !this.#speechIn(this.#prev, t)) {
          this.gaps++;
          this.gapFrames += Math.ceil(silentMs / this.#frameMs);
        }
      }
      this.stretches++;
      this.#j = 0;
      this.#minOffset = t;
    }
    this.#cleared = false;
    const offset = t - this.#frameMs * this.#j;
    if (offset < this.#minOffset) this.#minOffset = offset;
    this.#playoutEnd = Math.max(this.#playoutEnd, t) + this.#frameMs;
    this.#prev = t;
    this.#j++;
    this.frames++;
    return offset - this.#minOffset;
  }

  /** Whether a caller speech start lies in (from, to]; starts at or before `from` are passed for good. */
  #speechIn(from: number, to: number): boolean {
    const xs = this.#speech;
    while (this.#speechIdx < xs.length && xs[this.#speechIdx]! <= from) this.#speechIdx++;
    return this.#speechIdx < xs.length && xs[this.#speechIdx]! <= to;
  }
}

export function analyzeAgentFrames(arrivalsMs: readonly number[], opts: FrameAnalysisOptions): FrameAnalysis {
  const timer = new AgentFrameTimer({
    callerSpeechStartsMs: opts.callerSpeechStartsMs,
    ...(opts.frameMs !== undefined ? { frameMs: opts.frameMs } : {}),
    ...(opts.maxGapMs !== undefined ? { maxGapMs: opts.maxGapMs } : {}),
  });
  const latenessMs: number[] = new Array(arrivalsMs.length);
  let clearIdx = 0;
  for (let i = 0; i < arrivalsMs.length; i++) {
    const t = arrivalsMs[i]!;
    while (clearIdx < opts.clearsMs.length && opts.clearsMs[clearIdx]! <= t)
      timer.clear(opts.clearsMs[clearIdx++]!);
    latenessMs[i] = timer.frame(t);
  }
  return {
    frames: arrivalsMs.length,
    latenessMs,
    stretches: timer.stretches,
    gaps: timer.gaps,
    gapFrames: timer.gapFrames,
  };
}
