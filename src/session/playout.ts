// The agent's voice on the transport for one turn: queues audio, knows how much of the
// turn the caller has heard, and can pause (drop what is queued at the far side) and
// resume from the heard position, so a cough or "uh-huh" costs a short gap instead of the
// agent's whole answer.
import { audioFrom, audioMs } from "./agent-audio.ts";
import type { AgentAudio, CallTransport, OutputFormat } from "./transport.ts";

interface Segment {
  /** Where this piece of the turn starts on the transport's cumulative timeline, ms. */
  transportStartMs: number;
  turnStartMs: number;
  durationMs: number;
}

export class TurnPlayout {
  readonly #transport: CallTransport;
  readonly #format: OutputFormat;
  /**
   * The turn's audio from `#keptFromMs` on: what a resume may still have to send. Pieces the
   * caller has heard in full are let go as the playout passes them (`#release`). A reply's audio
   * comes faster than it plays, so a piece kept until the turn's end lives for seconds: V8 moves
   * it to the old generation and counts its bytes as external memory grown since the last full
   * collection, which brings the next one forward. At 200 SIP calls these pieces were most of
   * the ~3.5 MB/s that did so, a full collection every ~10 s (docs/dev/2026-11-29-gc-external-memory.md).
   */
  readonly #chunks: (AgentAudio | undefined)[] = [];
  /** Duration of each of `#chunks`, ms. */
  readonly #chunkMs: number[] = [];
  /** Index of the first piece still kept. */
  #keptFrom = 0;
  /** Where that piece starts in the turn, ms. */
  #keptFromMs = 0;
  readonly #segments: Segment[] = [];
  /** Index of the last segment seen playing by heardMs (-1: none yet; reset with the segments). */
  #playing = -1;
  /** Total turn audio received so far, ms. */
  #turnMs = 0;
  #paused = false;
  #heardAtPauseMs = 0;
  #stopped = false;
  #dryRuns = 0;

  /** A held playout collects audio without sending it until `resume()` (preemptive turns). */
  constructor(transport: CallTransport, opts: { held?: boolean } = {}) {
    this.#transport = transport;
    this.#format = transport.output;
    this.#paused = opts.held ?? false;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Total audio of the turn received so far, ms. */
  get turnMs(): number {
    return this.#turnMs;
  }

  /**
   * Times the caller had heard everything sent of the turn before its next audio came: silence in
   * the middle of the agent's reply (a TTS slower than real time, a tool round). Read off the
   * transport's played position, which trails the real playout (Twilio's mark echoes): a dry spell
   * shorter than that lag is not seen, and nothing is counted that did not happen.
   */
  get dryRuns(): number {
    return this.#dryRuns;
  }

  /** Audio of the turn still kept for a resume (received, not yet heard in full), ms. */
  get keptMs(): number {
    return this.#turnMs - this.#keptFromMs;
  }

  /** Adds audio of this turn; it goes out at once unless the turn is paused. */
  push(audio: AgentAudio): void {
    const durationMs = audioMs(audio, this.#format);
    if (this.#stopped || durationMs === 0) return;
    this.#chunks.push(audio);
    this.#chunkMs.push(durationMs);
    const turnStartMs = this.#turnMs;
    this.#turnMs += durationMs;
    if (this.#paused) return;
    // Everything of the turn sent so far was heard before this came (hasUnplayed's reading of it).
    if (this.#segments.length > 0 && this.heardMs() >= turnStartMs - 0.5) this.#dryRuns++;
    this.#send(audio, turnStartMs, durationMs);
  }

  /**
   * How much of this turn the caller has heard, ms: read from the last segment that has started
   * playing. It is asked after every packet played (is the turn drained?), and a long answer comes
   * in hundreds of segments, so the search goes on from where it last stopped (the transport's
   * playout only moves forward) instead of from the first segment each time.
   */
  heardMs(): number {
    if (this.#paused || this.#stopped) return this.#heardAtPauseMs;
    const played = this.#transport.playedMs();
    const segments = this.#segments;
    let i = this.#playing;
    if (i >= 0 && played <= segments[i]!.transportStartMs) i = -1;
    while (i + 1 < segments.length && played > segments[i + 1]!.transportStartMs) i++;
    this.#playing = i;
    if (i < 0) return this.#heardAtPauseMs;
    const s = segments[i]!;
    const heard = s.turnStartMs + Math.min(s.durationMs, played - s.transportStartMs);
    this.#release(heard);
    return heard;
  }

  /** Lets go of the pieces that end at or before `heardMs`: no resume starts before it. */
  #release(heardMs: number): void {
    const chunks = this.#chunks;
    let k = this.#keptFrom;
    while (k < chunks.length && this.#keptFromMs + this.#chunkMs[k]! <= heardMs) {
      this.#keptFromMs += this.#chunkMs[k]!;
      chunks[k++] = undefined;
    }
    this.#keptFrom = k;
  }

  /** True while some of the turn's audio has not been heard yet. */
  hasUnplayed(): boolean {
    return this.heardMs() < this.#turnMs - 0.5;
  }

  pause(): void {
    if (this.#paused || this.#stopped) return;
    this.#heardAtPauseMs = this.heardMs();
    this.#paused = true;
    this.#transport.clear();
    this.#segments.length = 0;
    this.#playing = -1;
  }

  /** Plays the rest of the turn from where the caller stopped hearing it. */
  resume(): void {
    if (!this.#paused || this.#stopped) return;
    this.#paused = false;
    const from = this.#heardAtPauseMs;
    let offset = this.#keptFromMs;
    for (let k = this.#keptFrom; k < this.#chunks.length; k++) {
      const chunk = this.#chunks[k]!;
      const durationMs = this.#chunkMs[k]!;
      const end = offset + durationMs;
      if (end > from) {
        const { rest, startMs } = audioFrom(chunk, from - offset, this.#format);
        this.#send(rest, offset + startMs, durationMs - startMs);
      }
      offset = end;
    }
  }

  /** Ends the turn's audio for good (barge-in); returns how much of it was heard, ms. */
  stop(): number {
    if (this.#stopped) return this.#heardAtPauseMs;
    const heard = this.heardMs();
    if (!this.#paused && this.hasUnplayed()) this.#transport.clear();
    this.#heardAtPauseMs = heard;
    this.#stopped = true;
    // Nothing of it will be sent again.
    this.#chunks.length = 0;
    this.#chunkMs.length = 0;
    this.#keptFrom = 0;
    this.#keptFromMs = this.#turnMs;
    return heard;
  }

  #send(audio: AgentAudio, turnStartMs: number, durationMs: number): void {
    if (durationMs <= 0) return;
    this.#segments.push({ transportStartMs: this.#transport.queuedMs(), turnStartMs, durationMs });
    this.#transport.play(audio);
  }
}
