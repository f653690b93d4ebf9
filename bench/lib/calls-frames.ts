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

/** Whether some value of the ascending list `xs` lies in (from, to]. */
function anyIn(xs: readonly number[], from: number, to: number): boolean {
  for (const x of xs) {
    if (x > to) return false;
    if (x > from) return true;
  }
  return false;
}

export function analyzeAgentFrames(arrivalsMs: readonly number[], opts: FrameAnalysisOptions): FrameAnalysis {
  const frameMs = opts.frameMs ?? 20;
  const maxGapMs = opts.maxGapMs ?? 2000;
  const latenessMs: number[] = new Array(arrivalsMs.length);
  let playoutEnd = Number.NEGATIVE_INFINITY;
  let prev = Number.NEGATIVE_INFINITY;
  let j = 0;
  let minOffset = 0;
  let stretches = 0;
  let gaps = 0;
  let gapFrames = 0;
  let clearIdx = 0;
  for (let i = 0; i < arrivalsMs.length; i++) {
    const t = arrivalsMs[i]!;
    let cleared = false;
    while (clearIdx < opts.clearsMs.length && opts.clearsMs[clearIdx]! <= t) {
      const c = opts.clearsMs[clearIdx++]!;
      if (c >= prev) {
        cleared = true;
        if (playoutEnd > c) playoutEnd = c;
      }
    }
    const dry = t > playoutEnd;
    if (i === 0 || cleared || dry) {
      if (i > 0 && !cleared && dry) {
        const silentMs = t - playoutEnd;
        if (silentMs < maxGapMs && !anyIn(opts.callerSpeechStartsMs, prev, t)) {
          gaps++;
          gapFrames += Math.ceil(silentMs / frameMs);
        }
      }
      stretches++;
      j = 0;
      minOffset = t;
    }
    const offset = t - frameMs * j;
    if (offset < minOffset) minOffset = offset;
    latenessMs[i] = offset - minOffset;
    playoutEnd = Math.max(playoutEnd, t) + frameMs;
    prev = t;
    j++;
  }
  return { frames: arrivalsMs.length, latenessMs, stretches, gaps, gapFrames };
}
