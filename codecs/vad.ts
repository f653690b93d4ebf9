// Voice activity detection for one call: an energy gate, Silero VAD v5 and a speech segmenter.
//
// Inference is async because onnxruntime-node's run() is (it defers a synchronous native call with
// setImmediate, so there is no synchronous path through its public API). Nothing depends on timing,
// though: audio is cut into 32 ms windows as it arrives, windows are processed strictly in order,
// and every event carries its position in the audio stream (atMs), not a wall-clock time. The
// decisions themselves live in the pure SpeechSegmenter.
//
// The gate: windows whose RMS level is below `energyGateDbfs` get probability 0 without inference,
// so silence costs almost nothing. After a long gated stretch the model's recurrent state is reset
// to the start-of-stream state, which is what a long silence leads it to anyway.
//
// Allocation: this runs for every 20 ms frame of every call, so its steady state allocates nothing.
// Samples wait in one per-detector buffer, each window is copied into one scratch window, and a
// window below the gate is decided at once, inside write() (its events fire from there), with no
// promise; only a window that needs inference waits for the model, and the windows behind it wait
// in the buffer. push() is the same machinery plus a result object per push, for callers that want
// the per-window figures.

import { LoudnessCue, type WindowPower } from "./loudness-cue.ts";
import {
  type ProbabilityCallback,
  type SileroModel,
  type SileroRate,
  type SileroStream,
  sileroWindowSamples,
} from "./silero.ts";
import {
  type NearWindow,
  SpeechSegmenter,
  type SpeechSegmenterOptions,
  type VadEvent,
} from "./speech-segmenter.ts";

export { loadSileroModel } from "./silero.ts";
export type { NearWindow, VadEvent } from "./speech-segmenter.ts";

export interface VoiceActivityOptions extends SpeechSegmenterOptions {
  /** Windows quieter than this (RMS, dBFS) skip inference and count as silence. Default -55. */
  energyGateDbfs?: number;
  /**
   * Once the line has carried a window of LINE_HEARD_DBFS or more, the gate is this far below the
   * loudest window so far when that is lower than energyGateDbfs (never below GATE_FLOOR_DBFS), dB.
   * Unset: the fixed gate alone. A fixed gate judges a quiet line unlike a loud one: 15 dB quieter
   * on the line, a talker behind the caller fell under it between syllables, the model heard their
   * speech in pieces, and the caller's gate took them for the caller more often
   * (docs/dev/2026-12-02-quiet-line-vad-gate.md).
   */
  energyGateBelowLoudestDb?: number;
  /**
   * Whether the window [startMs, endMs) stands out as a near voice (see nearThreshold), asked as it
   * is decided, with the model's probability for it; the audio's owner measures that (the caller's
   * gate keeps each frame's level).
   */
  near?: (startMs: number, endMs: number, probability: number) => NearWindow;
  /** Rate of the PCM given to push(). Default 16000. */
  sampleRate?: SileroRate;
  /** Called with each event as it is decided, in addition to being returned by push(). */
  onEvent?: (event: VadEvent) => void;
  /**
   * Called when inference fails on a window given by write(), and with what onEvent throws for one
   * (a push() rejects instead). The window is skipped and the windows after it are processed as
   * usual. Without onError, what onEvent throws propagates out of the write() that decided it.
   */
  onError?: (err: Error) => void;
  /**
   * Audio waiting for the model at most, ms (default: no bound, for audio written faster than real
   * time, e.g. a whole file). For a live stream: a model slower than real time (a starved machine)
   * would otherwise leave every call's audio queued in its detector, seconds more each second;
   * past the bound the oldest whole windows are skipped undecided (positions still advance with the
   * audio, so the caller's timeline stays true) and counted in `skippedMs`/`onSkip`.
   */
  maxBacklogMs?: number;
  /** Told of each skip, with the ms of audio skipped. */
  onSkip?: (ms: number) => void;
}

export interface VadWindow {
  startMs: number;
  probability: number;
  /** Below the energy gate: no inference was run. */
  gated: boolean;
}

export interface VadResult {
  /** One entry per 32 ms window completed by this push (a short push may complete none). */
  windows: VadWindow[];
  events: VadEvent[];
  /** Whether the detector is inside a speech segment after this push. */
  speaking: boolean;
}

/**
 * A window this loud is the line's level showing (a voice, the caller's or the room's), not the
 * line's own noise: from it on the gate may follow the line down (energyGateBelowLoudestDb), dBFS.
 */
const LINE_HEARD_DBFS = -50;
/** The gate never goes below this: about a μ-law line's smallest steps, dBFS. */
const GATE_FLOOR_DBFS = -70;

/** Gated windows in a row after which the model state is reset (about 0.5 s). */
const GATED_RESET_WINDOWS = 16;

/** A push() waiting for its windows: those numbered [from, until) since the last reset. */
interface PushWaiter {
  from: number;
  until: number;
  result: VadResult;
  resolve: (r: VadResult) => void;
  reject: (e: unknown) => void;
}

export class VoiceActivityDetector {
  readonly sampleRate: SileroRate;
  readonly windowMs = 32;
  readonly energyGateDbfs: number;
  private readonly gateBelowLoudestDb: number | undefined;
  /** The loudest window since reset(), dBFS: the gate follows it (energyGateBelowLoudestDb). */
  private loudestDbfs = Number.NEGATIVE_INFINITY;
  private readonly segmenter: SpeechSegmenter;
  private readonly model: SileroModel;
  private readonly onEvent: ((event: VadEvent) => void) | undefined;
  private readonly near: VoiceActivityOptions["near"];
  private readonly onError: ((err: Error) => void) | undefined;
  private stream: SileroStream;
  private readonly cue: LoudnessCue;
  private readonly windowSamples: number;
  /** Samples not yet processed: buf[start, end). */
  private buf: Int16Array;
  private start = 0;
  private end = 0;
  /** The window being decided (copied out of buf). */
  private readonly window: Int16Array;
  private readonly power: WindowPower = { plain: 0, emphasised: 0 };
  /** Windows begun (positionMs), windows decided, and windows completed by the audio so far, since reset. */
  private windowIndex = 0;
  private decided = 0;
  private formed = 0;
  private samplesIn = 0;
  private gatedRun = 0;
  /** A window is with the model; the windows behind it wait. */
  private inferring = false;
  private inferStartMs = 0;
  private inferLoud = false;
  /** Inside the processing loop: a write() from an event callback only appends. */
  private draining = false;
  private readonly waiters: PushWaiter[] = [];
  private idleWaiters: Array<() => void> = [];
  /** Bumped by reset(), which also replaces the stream (so an inference begun before it is dropped). */
  private generation = 0;
  private readonly maxBacklogSamples: number;
  private readonly onSkip: ((ms: number) => void) | undefined;
  /** Windows skipped while one was with the model: counted as decided once it is. */
  private skippedInFlight = 0;
  /** Audio skipped for being too far behind, ms, since the detector was made. */
  skippedMs = 0;

  constructor(model: SileroModel, options: VoiceActivityOptions = {}) {
    this.model = model;
    this.sampleRate = options.sampleRate ?? 16000;
    this.energyGateDbfs = options.energyGateDbfs ?? -55;
    this.gateBelowLoudestDb = options.energyGateBelowLoudestDb;
    this.segmenter = new SpeechSegmenter(options);
    this.onEvent = options.onEvent;
    this.near = options.near;
    this.onError = options.onError;
    this.stream = model.createStream(this.sampleRate);
    this.cue = new LoudnessCue({ windowMs: this.windowMs });
    this.windowSamples = sileroWindowSamples(this.sampleRate);
    this.window = new Int16Array(this.windowSamples);
    this.buf = new Int16Array(4 * this.windowSamples);
    this.onSkip = options.onSkip;
    this.maxBacklogSamples =
      options.maxBacklogMs === undefined
        ? Number.POSITIVE_INFINITY
        : Math.max(2 * this.windowSamples, Math.round((options.maxBacklogMs * this.sampleRate) / 1000));
  }

  /** Inside a speech segment, as of the last processed window. */
  get speaking(): boolean {
    return this.segmenter.speaking;
  }

  /** Inside speech, how long it has been silent, as of the last processed window (see SpeechSegmenter). */
  get pausedMs(): number {
    return this.segmenter.pausedMs;
  }

  /** Outside speech, a possible onset is under way, as of the last processed window (see SpeechSegmenter). */
  get onsetPending(): boolean {
    return this.segmenter.onsetPending;
  }

  /** Audio processed so far, in ms (whole windows only). */
  get positionMs(): number {
    return this.windowIndex * this.windowMs;
  }

  /**
   * Adds audio of any length (mono Int16 at sampleRate), copied at once, so the caller may reuse its
   * buffer. Windows below the energy gate are decided before this returns (their events are given
   * to onEvent from inside it); a window that needs inference, and those after it, when the model
   * answers. Allocates nothing in the steady state.
   */
  write(pcm: Int16Array): void {
    this.append(pcm);
    this.drain();
  }

  /**
   * As write(), and resolves with what the windows this push completed gave (a short push may
   * complete none), once they and those of earlier pushes are decided.
   */
  push(pcm: Int16Array): Promise<VadResult> {
    const from = this.formed;
    this.append(pcm);
    return new Promise<VadResult>((resolve, reject) => {
      const result: VadResult = { windows: [], events: [], speaking: this.segmenter.speaking };
      this.waiters.push({ from, until: this.formed, result, resolve, reject });
      this.drain();
      this.settle();
    });
  }

  /** Ends an open speech segment at the end of the audio processed so far (e.g. the call ended). */
  async finish(): Promise<VadEvent[]> {
    if (this.inferring) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const event = this.segmenter.finish(this.positionMs);
    if (!event) return [];
    this.onEvent?.(event);
    return [event];
  }

  /** Forgets everything: model state, buffered samples, segment state; positions restart at 0. */
  reset(): void {
    this.generation++;
    this.stream = this.model.createStream(this.sampleRate);
    this.start = 0;
    this.end = 0;
    this.segmenter.reset();
    this.cue.reset();
    this.windowIndex = 0;
    this.decided = 0;
    this.formed = 0;
    this.samplesIn = 0;
    this.gatedRun = 0;
    this.loudestDbfs = Number.NEGATIVE_INFINITY;
    this.inferring = false;
    this.skippedInFlight = 0;
    // Pushes still waiting end with what they had.
    for (const w of this.waiters.splice(0)) {
      w.result.speaking = false;
      w.resolve(w.result);
    }
    this.wakeIdle();
  }

  private append(pcm: Int16Array): void {
    const n = pcm.length;
    if (this.end + n > this.buf.length) {
      const held = this.end - this.start;
      if (held + n > this.buf.length) {
        const grown = new Int16Array(Math.max(2 * this.buf.length, held + n));
        grown.set(this.buf.subarray(this.start, this.end));
        this.buf = grown;
      } else {
        this.buf.copyWithin(0, this.start, this.end);
      }
      this.start = 0;
      this.end = held;
    }
    this.buf.set(pcm, this.end);
    this.end += n;
    this.samplesIn += n;
    this.formed = Math.floor(this.samplesIn / this.windowSamples);
    if (this.end - this.start > this.maxBacklogSamples) this.skipBacklog();
  }

  /** Skips the oldest whole windows beyond the backlog bound (see maxBacklogMs). */
  private skipBacklog(): void {
    const size = this.windowSamples;
    const windows = Math.ceil((this.end - this.start - this.maxBacklogSamples) / size);
    this.start += windows * size;
    this.windowIndex += windows;
    if (this.inferring) this.skippedInFlight += windows;
    else this.decided += windows;
    const ms = windows * this.windowMs;
    this.skippedMs += ms;
    this.onSkip?.(ms);
  }

  /** Decides the buffered windows in order, until one has to wait for the model. */
  private drain(): void {
    if (this.draining || this.inferring) return;
    this.draining = true;
    const generation = this.generation;
    try {
      this.drainWindows(generation);
    } finally {
      this.draining = false;
    }
    // reset() from an event callback: what was written after it is the new stream's.
    if (generation !== this.generation) {
      this.drain();
      return;
    }
    this.settle();
    if (!this.inferring) this.wakeIdle();
  }

  /** The gate now: the fixed one, or below it once the line has shown a quieter level, dBFS. */
  private gateDbfs(): number {
    const below = this.gateBelowLoudestDb;
    if (below === undefined || this.loudestDbfs < LINE_HEARD_DBFS) return this.energyGateDbfs;
    return Math.max(GATE_FLOOR_DBFS, Math.min(this.energyGateDbfs, this.loudestDbfs - below));
  }

  private drainWindows(generation: number): void {
    const size = this.windowSamples;
    const w = this.window;
    while (this.end - this.start >= size && generation === this.generation && !this.inferring) {
      const buf = this.buf;
      const s = this.start;
      for (let i = 0; i < size; i++) w[i] = buf[s + i]!;
      this.start = s + size;
      if (this.start === this.end) this.start = this.end = 0;
      const startMs = this.windowIndex * this.windowMs;
      this.windowIndex++;
      // The cue's plain power is the window's mean square: the gate reads its level from it.
      const power = this.cue.measure(w, this.power);
      const db = 10 * Math.log10(power.plain);
      if (db > this.loudestDbfs) this.loudestDbfs = db;
      const gated = db < this.gateDbfs();
      const loud = !gated && this.cue.isLoud(power);
      if (gated) {
        if (++this.gatedRun === GATED_RESET_WINDOWS) this.stream.reset();
        this.stream.skip(w);
        this.decide(0, startMs, true, loud);
        continue;
      }
      this.gatedRun = 0;
      this.inferring = true;
      this.inferStartMs = startMs;
      this.inferLoud = loud;
      this.stream.requestProbability(w, this.onProbability);
    }
  }

  /** The model's answer for the window in flight; one callback for the detector's life. */
  private readonly onProbability: ProbabilityCallback = (stream, probability, error) => {
    if (stream !== this.stream) return; // reset() since: dropped with its stream
    this.inferring = false;
    const generation = this.generation;
    try {
      if (error) this.failed(error);
      else this.decide(probability, this.inferStartMs, false, this.inferLoud);
    } finally {
      this.decided += this.skippedInFlight;
      this.skippedInFlight = 0;
      if (generation === this.generation) this.drain();
    }
  };

  private failed(err: Error): void {
    const k = this.decided++;
    // A model failure with nobody to tell (no push, no onError) is dropped: the window is skipped.
    if (!this.fault(k, err)) this.onError?.(err);
  }

  /** Rejects the push that window k belongs to, if one does; says whether it did. */
  private fault(k: number, err: unknown): boolean {
    const head = this.waiters[0];
    if (!head || k < head.from || k >= head.until) return false;
    this.waiters.shift();
    head.reject(err);
    return true;
  }

  /** The window at startMs has its probability: noise learning, the segmenter, events, results. */
  private decide(probability: number, startMs: number, gated: boolean, loud: boolean): void {
    // Noise is learned only outside speech: low-scored windows inside it may be weak consonants.
    if (!this.segmenter.speaking && probability < this.segmenter.negThreshold)
      this.cue.learnNoise(this.power);
    const k = this.decided++;
    const head = this.waiters[0];
    const result = head && k >= head.from && k < head.until ? head.result : undefined;
    result?.windows.push({ startMs, probability, gated });
    const endMs = startMs + this.windowMs;
    const near = !gated && this.near !== undefined && this.near(startMs, endMs, probability);
    const event = this.segmenter.update(probability, startMs, endMs, loud, near);
    if (!event) return;
    result?.events.push(event);
    try {
      this.onEvent?.(event);
    } catch (err) {
      if (this.fault(k, err)) return;
      if (!this.onError) throw err;
      this.onError(asError(err));
    }
  }

  /** Resolves the pushes whose windows are all decided, in order. */
  private settle(): void {
    const waiters = this.waiters;
    while (waiters.length > 0 && this.decided >= waiters[0]!.until) {
      const w = waiters.shift()!;
      w.result.speaking = this.segmenter.speaking;
      w.resolve(w.result);
    }
  }

  private wakeIdle(): void {
    if (this.idleWaiters.length === 0) return;
    const idle = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of idle) wake();
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
