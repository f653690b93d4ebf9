// The caller's fixed timeline, played frame by frame, with cues at which it waits for the agent the
// way a person does: a caller who talks over the agent's greeting does so some way into what they
// hear, and one who asks a question waits for the greeting to end, not for a fixed time from the
// call's start. A timeline fixed in time does either only while the service answers as fast as the
// timeline counted on; under a hosted service's timing and its faults the agent may not have begun
// yet, or still be speaking. At a cue the timeline holds until the agent has been heard for the
// cue's time (`agentHeardMs`), or has spoken and then been quiet for it (`agentQuietMs`), playing
// a stretch of its own sound meanwhile (by default the second before the cue: the room goes on, no
// new onset appears), then goes on. The holds are reported so the timeline's labels can be moved onto the stream (`onStream`).

const FRAME_MS = 20;
/** A gap in the agent's audio up to this long is inside one stretch of its speech (between sentences). */
const STRETCH_GAP_MS = 600;
/** A cue the agent never answers holds no longer than this, by default. */
const MAX_HOLD_MS = 20_000;
/** What is played while holding: the timeline's last this much before the cue, by default. */
const FILL_MS = 1000;

/**
 * Wait at `atMs` on the timeline until the agent has been heard `agentHeardMs` into its current
 * speech, or has spoken and then been quiet `agentQuietMs` (one of the two).
 */
export type TimelineCue = ({ agentHeardMs: number } | { agentQuietMs: number }) & {
  atMs: number;
  /** Where the sound played while holding begins on the timeline (default: FILL_MS before the cue). */
  fillFromMs?: number;
  /**
   * ...and where it ends (default: the cue). A span elsewhere than just before the cue (the room
   * after the caller's last sound, say) is faded in from the timeline at the cue.
   */
  fillToMs?: number;
  /** Goes on after this long even if the agent has not been heard (default 20 s). */
  maxHoldMs?: number;
};

/** A cue the timeline held at, and for how long (ms, a multiple of the frame). */
export interface TimelineHold {
  atMs: number;
  heldMs: number;
}

/** Moves a time on the timeline (ms) onto the stream: later by every hold at or before it. */
export function onStream(timelineMs: number, holds: readonly TimelineHold[]): number {
  let ms = timelineMs;
  for (const h of holds) if (h.atMs <= timelineMs) ms += h.heldMs;
  return ms;
}

/** `out`'s first samples faded in from `from`'s (as many as `from` has). */
function fadeFrom(out: Int16Array, from: Int16Array): void {
  const n = Math.min(out.length, from.length);
  for (let i = 0; i < n; i++) {
    const w = (i + 1) / (n + 1);
    out[i] = Math.round(from[i]! * (1 - w) + out[i]! * w);
  }
}

export class CallerTimeline {
  readonly #samples: Int16Array;
  readonly #frame: number;
  readonly #cues: TimelineCue[];
  readonly #holds: TimelineHold[] = [];
  /** Where the next frame comes from on the timeline, in samples. */
  #pos = 0;
  /** The cue being held at, its fill's span (samples) and how far into it (a back-and-forth walk). */
  #holding: { cue: TimelineCue; from: number; to: number; step: number; frames: number } | null = null;
  /** The agent's current stretch of speech: when it began and when it was last heard (frame counts). */
  #stretchFrom = -1;
  #lastHeard = Number.NEGATIVE_INFINITY;
  #k = 0;

  constructor(samples: Int16Array, rate: number, cues: readonly TimelineCue[] = []) {
    this.#samples = samples;
    this.#frame = (rate * FRAME_MS) / 1000;
    this.#cues = [...cues].sort((a, b) => a.atMs - b.atMs);
    for (const c of this.#cues) {
      const wait = "agentHeardMs" in c ? c.agentHeardMs : c.agentQuietMs;
      if (!(c.atMs >= 0) || !(wait >= 0))
        throw new Error(`timeline cue at ${c.atMs} ms: atMs and its wait for the agent must be ≥ 0 ms`);
    }
  }

  /** The timeline has been played to its end. */
  get done(): boolean {
    return this.#holding === null && this.#pos >= this.#samples.length;
  }

  /** The cues held at so far. */
  get holds(): readonly TimelineHold[] {
    return this.#holds;
  }

  /**
   * The next frame into `out` (zeros past the timeline's end), given whether the agent was heard in
   * the frame before it.
   */
  next(out: Int16Array, agentHeard: boolean): void {
    const k = this.#k++;
    if (agentHeard) {
      // The frame heard is the one before this.
      if (k - 1 - this.#lastHeard > STRETCH_GAP_MS / FRAME_MS) this.#stretchFrom = k - 1;
      this.#lastHeard = k - 1;
    }
    if (!this.#holding) this.#reachCue();
    const h = this.#holding;
    if (h) {
      if (!this.#cueMet(h.cue, k, agentHeard) && h.frames * FRAME_MS < (h.cue.maxHoldMs ?? MAX_HOLD_MS)) {
        this.#fill(out, h);
        return;
      }
      this.#holds.push({ atMs: h.cue.atMs, heldMs: h.frames * FRAME_MS });
      this.#holding = null;
      this.#play(out);
      // A cue the agent had already met plays on untouched.
      if (h.frames > 0) this.#crossfade(out, h);
      return;
    }
    this.#play(out);
  }

  #play(out: Int16Array): void {
    out.fill(0);
    const s = this.#samples;
    if (this.#pos < s.length) out.set(s.subarray(this.#pos, Math.min(s.length, this.#pos + out.length)));
    this.#pos += out.length;
  }

  /** The hold's fill faded into the timeline over the frame's first samples, so going on adds no click. */
  #crossfade(out: Int16Array, h: { from: number; to: number; step: number }): void {
    const fill = new Int16Array(Math.min(out.length, Math.round(this.#frame / 2)));
    this.#walk(fill, h);
    fadeFrom(out, fill);
  }

  #cueMet(cue: TimelineCue, k: number, agentHeard: boolean): boolean {
    // Goes on over the agent only while it is heard, so the sound begins over its voice, not between sentences.
    if ("agentHeardMs" in cue) return agentHeard && (k - this.#stretchFrom) * FRAME_MS >= cue.agentHeardMs;
    return this.#stretchFrom >= 0 && (k - 1 - this.#lastHeard) * FRAME_MS >= cue.agentQuietMs;
  }

  /** Starts holding if the next frame would pass the next cue. */
  #reachCue(): void {
    const cue = this.#cues[0];
    if (!cue) return;
    if (this.#pos + this.#frame <= this.#sample(cue.atMs)) return;
    this.#cues.shift();
    const from = Math.max(0, this.#sample(cue.fillFromMs ?? cue.atMs - FILL_MS));
    const to = Math.min(
      cue.fillToMs !== undefined ? this.#sample(cue.fillToMs) : this.#pos,
      this.#samples.length,
    );
    this.#holding = { cue, from: Math.min(from, to), to, step: 0, frames: 0 };
  }

  /**
   * One frame of the hold: the fill's span walked back from the cue and forward again, so each turn
   * joins sample to sample and the room sounds on without a new onset.
   */
  #fill(out: Int16Array, h: { from: number; to: number; step: number; frames: number }): void {
    h.frames++;
    this.#walk(out, h);
    if (h.frames > 1 || h.to === this.#pos) return;
    // A span away from the cue: faded in from the timeline's own next samples.
    fadeFrom(out, this.#samples.subarray(this.#pos, this.#pos + Math.round(this.#frame / 2)));
  }

  /** A time on the timeline, ms, as a sample index. */
  #sample(ms: number): number {
    return Math.round((ms * this.#frame) / FRAME_MS);
  }

  #walk(out: Int16Array, h: { from: number; to: number; step: number }): void {
    const span = h.to - h.from;
    if (span <= 0) {
      out.fill(0);
      return;
    }
    for (let i = 0; i < out.length; i++, h.step++) {
      const phase = h.step % (2 * span);
      out[i] = this.#samples[phase < span ? h.to - 1 - phase : h.from + (phase - span)]!;
    }
  }
}
