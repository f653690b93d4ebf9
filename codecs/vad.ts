// Voice activity detection for one call: an energy gate, Silero VAD v5 and a speech segmenter.
//
// push() is async because onnxruntime-node's run() is (it defers a synchronous native call with
// setImmediate, so there is no synchronous path through its public API). Nothing depends on timing,
// though: audio is cut into 32 ms windows as it arrives, windows are processed strictly in order
// (pushes are queued), and every event carries its position in the audio stream (atMs), not a
// wall-clock time. The decisions themselves live in the pure SpeechSegmenter.
//
// The gate: windows whose RMS level is below `energyGateDbfs` get probability 0 without inference,
// so silence costs almost nothing. After a long gated stretch the model's recurrent state is reset
// to the start-of-stream state, which is what a long silence leads it to anyway.

import { LoudnessCue } from "./loudness-cue.ts";
import { Framer, levelDbfs } from "./pcm.ts";
import { type SileroModel, type SileroRate, type SileroStream, sileroWindowSamples } from "./silero.ts";
import { SpeechSegmenter, type SpeechSegmenterOptions, type VadEvent } from "./speech-segmenter.ts";

export { loadSileroModel } from "./silero.ts";
export type { VadEvent } from "./speech-segmenter.ts";

export interface VoiceActivityOptions extends SpeechSegmenterOptions {
  /** Windows quieter than this (RMS, dBFS) skip inference and count as silence. Default -55. */
  energyGateDbfs?: number;
  /** Rate of the PCM given to push(). Default 16000. */
  sampleRate?: SileroRate;
  /** Called with each event as it is decided, in addition to being returned by push(). */
  onEvent?: (event: VadEvent) => void;
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

/** Gated windows in a row after which the model state is reset (about 0.5 s). */
const GATED_RESET_WINDOWS = 16;

export class VoiceActivityDetector {
  readonly sampleRate: SileroRate;
  readonly windowMs = 32;
  readonly energyGateDbfs: number;
  private readonly segmenter: SpeechSegmenter;
  private readonly model: SileroModel;
  private readonly onEvent: ((event: VadEvent) => void) | undefined;
  private stream: SileroStream;
  private framer: Framer;
  private readonly cue: LoudnessCue;
  private windowIndex = 0;
  private gatedRun = 0;
  private queue: Promise<unknown> = Promise.resolve();
  /** Bumped by reset() so windows queued before it are dropped. */
  private generation = 0;

  constructor(model: SileroModel, options: VoiceActivityOptions = {}) {
    this.model = model;
    this.sampleRate = options.sampleRate ?? 16000;
    this.energyGateDbfs = options.energyGateDbfs ?? -55;
    this.segmenter = new SpeechSegmenter(options);
    this.onEvent = options.onEvent;
    this.stream = model.createStream(this.sampleRate);
    this.framer = new Framer(sileroWindowSamples(this.sampleRate));
    this.cue = new LoudnessCue({ windowMs: this.windowMs });
  }

  /** Inside a speech segment, as of the last processed window. */
  get speaking(): boolean {
    return this.segmenter.speaking;
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
   * Adds audio of any length (mono Int16 at sampleRate). The samples are copied at once, so the caller
   * may reuse its buffer; the result covers the windows this push completed.
   */
  push(pcm: Int16Array): Promise<VadResult> {
    const windows = this.framer.push(pcm);
    const generation = this.generation;
    const job = this.queue.then(() => this.process(windows, generation));
    this.queue = job.catch(() => undefined);
    return job;
  }

  /** Ends an open speech segment at the end of the audio processed so far (e.g. the call ended). */
  async finish(): Promise<VadEvent[]> {
    await this.queue;
    const event = this.segmenter.finish(this.positionMs);
    if (!event) return [];
    this.onEvent?.(event);
    return [event];
  }

  /** Forgets everything: model state, buffered samples, segment state; positions restart at 0. */
  reset(): void {
    this.generation++;
    this.stream = this.model.createStream(this.sampleRate);
    this.framer = new Framer(sileroWindowSamples(this.sampleRate));
    this.segmenter.reset();
    this.cue.reset();
    this.windowIndex = 0;
    this.gatedRun = 0;
  }

  private async process(windows: Int16Array[], generation: number): Promise<VadResult> {
    const result: VadResult = { windows: [], events: [], speaking: this.segmenter.speaking };
    for (const w of windows) {
      if (generation !== this.generation) break;
      const startMs = this.windowIndex * this.windowMs;
      this.windowIndex++;
      const level = levelDbfs(w);
      const gated = level < this.energyGateDbfs;
      const power = this.cue.measure(w);
      const loud = !gated && this.cue.isLoud(power);
      let probability = 0;
      if (gated) {
        if (++this.gatedRun === GATED_RESET_WINDOWS) this.stream.reset();
        this.stream.skip(w);
      } else {
        this.gatedRun = 0;
        const stream = this.stream;
        probability = await stream.probability(w);
        if (generation !== this.generation) break;
      }
      // Noise is learned only outside speech: low-scored windows inside it may be weak consonants.
      if (!this.segmenter.speaking && probability < this.segmenter.negThreshold) this.cue.learnNoise(power);
      result.windows.push({ startMs, probability, gated });
      const event = this.segmenter.update(probability, startMs, startMs + this.windowMs, loud);
      if (event) {
        result.events.push(event);
        this.onEvent?.(event);
      }
    }
    result.speaking = this.segmenter.speaking;
    return result;
  }
}
