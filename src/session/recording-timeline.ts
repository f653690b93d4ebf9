// The two channels of a call recording laid on one timeline, in ms since the call began:
// left the caller as the bridge received them, right the agent as the caller heard it. It is
// fed the transport's events with their clock times and hands out interleaved stereo samples
// once no later event can change them. Pure bookkeeping, no I/O and no clock of its own.
//
// The timeline's rate is the inbound rate: the caller's frames, which come 50 times a second,
// are only copied; the agent's audio, which comes a few times per reply, is what gets resampled
// (a streaming Resampler over the whole channel, silence included, so there is no seam).
//
// Caller. Frames are laid end to end in arrival order, one lane per speaker, the lanes mixed (a
// Discord channel's members each send their own frames, and only while they speak; a phone call
// has one lane). A lane with nothing held and no frame for `holdMs` goes, and the speaker's next
// frame starts it anew by the clock. Within a lane, a frame that arrives more than
// `gapMs` after the end of the audio before it means frames were missing: the gap is filled with
// silence so the frame lands where the clock says it ended. But over TCP (Twilio) frames are
// never lost, only late: a stall ends in a burst, which would run the channel ahead of the
// clock. So the silence of the latest gap stays provisional while it is still held here, and a
// burst takes its room back from it; audio still running ahead by more than `maxAheadMs` (a
// stall longer than what is held) is dropped, so the two channels never drift apart. With no
// frames at all for `holdMs`, the silence up to then is settled and goes out. Running ahead
// before anything is handed out is the other case: frames cannot arrive before they were sent,
// so the recording began after the call's audio did (the transport held the first frames while
// the session started, up to a second behind an agent webhook). Then the clock moves, not the
// audio: the timeline's zero goes back by what ran ahead, for both channels, so the agent's
// first words stay where they came after the caller's first frames.
//
// Agent. Audio is heard from when the transport is given it, or when the audio queued before it
// ends, in real time: the model the pacer paces by, and the way every transport's far side plays
// (Twilio, RTP, Discord). clear() stops it at the moment it is called; whatever was placed after
// that moment was never heard and is cut out. The transport's played() reports are not the cut:
// Twilio's mark echoes come back a round trip plus up to one mark (100 ms) after the audio
// played, so they are a lower bound of what was heard, and cutting there would remove
// 100-300 ms the caller did hear (the session's "heard" text errs on that side on purpose, the
// recording should not). The far side's own network delay is not modelled on either channel:
// the recording is the call as heard at the bridge.
import { Resampler } from "../../codecs/resample.ts";

export interface TimelineOptions {
  /** Rate of the caller's frames, and of the recording. */
  callerRate: number;
  /** Rate of the agent's audio (the transport's output rate). */
  agentRate: number;
  /** A frame this late after the previous audio's end marks a gap of silence (default 100). */
  gapMs?: number;
  /** Caller audio never runs further ahead of the clock than this; more is dropped (default 200). */
  maxAheadMs?: number;
  /** Without caller frames for this long, the silence up to then is settled (default 500). */
  holdMs?: number;
}

/** Agent audio at its place on the agent's timeline (samples at the agent rate). */
interface Piece {
  start: number;
  pcm: Int16Array;
}

/** One speaker's caller audio from the timeline's #taken on. */
interface Lane {
  readonly run: SampleRun;
  /** The latest gap's silence, [from, to) at `rate`, which a burst of late frames may take back. */
  padFrom: number;
  padTo: number;
  /** Timeline index of the latest frame's arrival. */
  lastArrival: number;
}

/** Samples from a known timeline position on, growing as needed and consumed from the front. */
class SampleRun {
  data = new Int16Array(0);
  length = 0;

  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.data.length) return;
    const grown = new Int16Array(Math.max(need, this.data.length * 2, 1024));
    grown.set(this.data.subarray(0, this.length));
    this.data = grown;
  }

  push(pcm: Int16Array): void {
    this.reserve(pcm.length);
    this.data.set(pcm, this.length);
    this.length += pcm.length;
  }

  zeros(n: number): void {
    this.reserve(n);
    this.data.fill(0, this.length, this.length + n);
    this.length += n;
  }

  /** Puts `n` samples of silence before the run's first. */
  zerosBefore(n: number): void {
    this.reserve(n);
    this.data.copyWithin(n, 0, this.length);
    this.data.fill(0, 0, n);
    this.length += n;
  }

  /** Removes `n` samples ending at `end` (an index into the run). */
  cut(end: number, n: number): void {
    this.data.copyWithin(end - n, end, this.length);
    this.length -= n;
  }

  consume(n: number): void {
    this.data.copyWithin(0, n, this.length);
    this.length -= n;
  }
}

export class RecordingTimeline {
  readonly rate: number;
  readonly agentRate: number;
  readonly #gap: number;
  readonly #maxAhead: number;
  readonly #hold: number;
  /** Timeline index (at `rate`) of the first sample not yet handed out. */
  #taken = 0;
  /** Each speaker's lane (a phone call's one under ""). */
  readonly #lanes = new Map<string, Lane>();
  /** Agent audio placed but not yet rendered, in time order; agent-rate indices. */
  #pieces: Piece[] = [];
  /** End of the agent audio queued so far, and how far the agent channel is rendered. */
  #agentEnd = 0;
  #agentDone = 0;
  /** Rendered agent channel at `rate`, from #taken on. */
  readonly #agent = new SampleRun();
  readonly #resampler: Resampler | undefined;
  #scratch = new Int16Array(0);
  #droppedCaller = 0;
  #finished = false;
  /** How far the timeline's zero lies before the clock's, ms (caller audio older than the recording). */
  #originMs = 0;

  constructor(opts: TimelineOptions) {
    this.rate = opts.callerRate;
    this.agentRate = opts.agentRate;
    this.#gap = this.#samples(opts.gapMs ?? 100);
    this.#maxAhead = this.#samples(opts.maxAheadMs ?? 200);
    this.#hold = this.#samples(opts.holdMs ?? 500);
    if (opts.agentRate !== opts.callerRate) this.#resampler = new Resampler(opts.agentRate, opts.callerRate);
  }

  /** Caller samples dropped because they ran too far ahead of the clock. */
  get droppedCallerSamples(): number {
    return this.#droppedCaller;
  }

  /** Samples (per channel) handed out so far. */
  get takenSamples(): number {
    return this.#taken;
  }

  /**
   * An inbound frame that arrived at `atMs`, from `speaker` on a transport that carries several.
   * Copied: the transport may reuse its buffer.
   */
  caller(frame: Int16Array, atMs: number, speaker = ""): void {
    if (this.#finished || frame.length === 0) return;
    let lane = this.#lanes.get(speaker);
    if (!lane) {
      lane = { run: new SampleRun(), padFrom: 0, padTo: 0, lastArrival: 0 };
      this.#lanes.set(speaker, lane);
    }
    const run = lane.run;
    const arrival = this.#index(atMs);
    const end = this.#taken + run.length;
    const start = arrival - frame.length;
    if (start - end > this.#gap) {
      lane.padFrom = end;
      lane.padTo = start;
      run.zeros(start - end);
    }
    let ahead = this.#taken + run.length + frame.length - arrival;
    const reclaimable = lane.padTo - Math.max(lane.padFrom, this.#taken);
    if (ahead > 0 && reclaimable > 0) {
      const n = Math.min(ahead, reclaimable);
      run.cut(lane.padTo - this.#taken, n);
      lane.padTo -= n;
      ahead -= n;
    }
    if (ahead > 0 && this.#taken === 0 && this.#agentDone === 0) {
      this.#moveOrigin(ahead, lane);
      ahead = 0;
    }
    lane.lastArrival = this.#index(atMs);
    if (ahead > this.#maxAhead) {
      this.#droppedCaller += frame.length;
      return;
    }
    run.push(frame);
  }

  /** Agent audio handed to the transport at `atMs`: heard from then, or once what is queued ends. */
  agent(pcm: Int16Array, atMs: number): void {
    if (this.#finished || pcm.length === 0) return;
    const start = Math.max(this.#agentEnd, this.#agentIndex(atMs), this.#agentDone);
    this.#pieces.push({ start, pcm: pcm.slice() });
    this.#agentEnd = start + pcm.length;
  }

  /** The transport dropped unheard agent audio at `atMs`: nothing placed after that was heard. */
  clearAgent(atMs: number): void {
    if (this.#finished) return;
    const cut = Math.max(this.#agentIndex(atMs), this.#agentDone);
    while (this.#pieces.length > 0) {
      const last = this.#pieces[this.#pieces.length - 1]!;
      if (last.start >= cut) this.#pieces.pop();
      else {
        if (last.start + last.pcm.length > cut) last.pcm = last.pcm.subarray(0, cut - last.start);
        break;
      }
    }
    this.#agentEnd = Math.min(this.#agentEnd, cut);
  }

  /** Stereo samples (interleaved, caller left) that no event after `atMs` can change; may be empty. */
  take(atMs: number): Int16Array {
    if (this.#finished) return new Int16Array(0);
    const settled = this.#index(atMs) - this.#hold;
    // With no lane, nobody has sent anything for holdMs: silence up to then.
    let caller = this.#lanes.size === 0 ? Math.max(0, settled - this.#taken) : Number.POSITIVE_INFINITY;
    for (const { run } of this.#lanes.values()) {
      if (settled > this.#taken + run.length) run.zeros(settled - this.#taken - run.length);
      caller = Math.min(caller, run.length);
    }
    this.#renderAgent(this.#agentIndex(atMs));
    const out = this.#emit(Math.min(caller, this.#agent.length));
    for (const [speaker, lane] of this.#lanes)
      if (lane.run.length === 0 && lane.lastArrival <= settled) this.#lanes.delete(speaker);
    return out;
  }

  /**
   * The call ended at `atMs`: agent audio after it was never heard, caller audio is complete.
   * Returns the rest of the recording; the timeline takes nothing more.
   */
  finish(atMs: number): Int16Array {
    if (this.#finished) return new Int16Array(0);
    this.clearAgent(atMs);
    let end = this.#index(atMs);
    for (const { run } of this.#lanes.values()) end = Math.max(end, this.#taken + run.length);
    for (const { run } of this.#lanes.values()) run.zeros(end - this.#taken - run.length);
    this.#renderAgent(Math.ceil((end * this.agentRate) / this.rate));
    if (this.#resampler) this.#agent.push(this.#resampler.flush());
    const n = end - this.#taken;
    if (this.#agent.length < n) this.#agent.zeros(n - this.#agent.length);
    this.#finished = true;
    this.#pieces = [];
    return this.#emit(n);
  }

  /** Renders the agent channel up to `until` (agent-rate index) and appends it at the timeline rate. */
  #renderAgent(until: number): void {
    const from = this.#agentDone;
    const n = until - from;
    if (n <= 0) return;
    let out: Int16Array;
    let at: number;
    if (this.#resampler) {
      if (this.#scratch.length < n) this.#scratch = new Int16Array(n);
      out = this.#scratch;
      at = 0;
    } else {
      this.#agent.reserve(n);
      out = this.#agent.data;
      at = this.#agent.length;
    }
    out.fill(0, at, at + n);
    let used = 0;
    for (const p of this.#pieces) {
      if (p.start >= until) break;
      const s = Math.max(p.start, from);
      const e = Math.min(p.start + p.pcm.length, until);
      if (e > s) out.set(p.pcm.subarray(s - p.start, e - p.start), at + s - from);
      if (p.start + p.pcm.length <= until) used++;
    }
    if (used > 0) this.#pieces.splice(0, used);
    this.#agentDone = until;
    if (!this.#resampler) {
      this.#agent.length += n;
      return;
    }
    const input = out.subarray(0, n);
    this.#agent.reserve(this.#resampler.outputLength(n));
    this.#agent.length += this.#resampler.pushInto(input, this.#agent.data.subarray(this.#agent.length));
  }

  /**
   * Puts the timeline's zero `n` samples earlier (nothing handed out yet) for the lane running
   * ahead: everything else already placed keeps its clock time, so it moves `n` later.
   */
  #moveOrigin(n: number, ahead: Lane): void {
    this.#originMs += (n * 1000) / this.rate;
    const agentShift = Math.round((n * this.agentRate) / this.rate);
    for (const p of this.#pieces) p.start += agentShift;
    if (this.#agentEnd > 0) this.#agentEnd += agentShift;
    for (const lane of this.#lanes.values()) {
      if (lane === ahead) continue;
      lane.run.zerosBefore(n);
      lane.padFrom += n;
      lane.padTo += n;
      lane.lastArrival += n;
    }
  }

  #emit(n: number): Int16Array {
    if (n <= 0) return new Int16Array(0);
    const out = new Int16Array(2 * n);
    const right = this.#agent.data;
    const lefts = [...this.#lanes.values()].map((lane) => lane.run.data);
    for (let i = 0; i < n; i++) {
      let v = 0;
      for (let l = 0; l < lefts.length; l++) v += lefts[l]![i]!;
      out[2 * i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      out[2 * i + 1] = right[i]!;
    }
    for (const lane of this.#lanes.values()) lane.run.consume(n);
    this.#agent.consume(n);
    this.#taken += n;
    return out;
  }

  #samples(ms: number): number {
    return Math.floor((ms * this.rate) / 1000);
  }

  /** Timeline position (at `rate`) of the clock time `ms`. */
  #index(ms: number): number {
    return Math.floor(((ms + this.#originMs) * this.rate) / 1000);
  }

  #agentIndex(ms: number): number {
    return Math.floor(((ms + this.#originMs) * this.agentRate) / 1000);
  }
}
