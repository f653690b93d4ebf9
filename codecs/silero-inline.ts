// Silero inference on the calling thread: the path for a few streams.
// Handing windows to the worker costs far more than the model: a message and a wake-up on each
// thread per batch, and the 8 ms gathering pause, after which the model's run is cold (measured on
// the 2-core VM: ~150 µs for a run straight after another, 650-1000 µs after an 8 ms pause). With
// few streams there is little to gather, so their windows run here, in a session of this thread's
// own: the run is native code that holds the event loop for its duration, which a handful of
// streams can afford and hundreds cannot (silero.ts switches).
//
// Windows asked for in the same turn of the event loop run as one batch: a Discord channel's
// speakers, whose frames are all delivered on one tick of the voice clock, cost one run per tick
// instead of one per speaker (B rows cost far less than B runs of one: ~550 µs for 6 rows against
// 6 × 175 hot, and a cold run pays its ~500 µs penalty once). Rows are independent in the model,
// so each stream gets the probability it would get alone.
import * as ort from "onnxruntime-node";
import { createSileroSession, type SileroRate } from "./silero-session.ts";
import { type BatchRow, packBatch, rowWidth, STATE, unpackBatch } from "./silero-shared.ts";

/** Most rows in one inline run; more wait for the next (the model switches to the worker well before). */
export const MAX_INLINE_BATCH = 16;

/** One batch size's feeds and outputs over buffers made once: nothing is allocated per run. */
interface BatchTensors {
  readonly input: Float32Array;
  readonly state: Float32Array;
  readonly feeds: ort.InferenceSession.FeedsType;
  readonly fetches: ort.InferenceSession.FetchesType;
  readonly probability: Float32Array;
  readonly nextState: Float32Array;
}

export class InlineSilero {
  readonly #session: ort.InferenceSession;
  readonly #rates = new Map<SileroRate, ort.Tensor>();
  /** By rate and batch size (rate * 100 + size). */
  readonly #tensors = new Map<number, BatchTensors>();

  private constructor(session: ort.InferenceSession) {
    this.#session = session;
  }

  static async load(): Promise<InlineSilero> {
    return new InlineSilero(await createSileroSession());
  }

  /**
   * Runs the rows' windows (all at `rate`, at most MAX_INLINE_BATCH) as one batch: resolves once
   * each row's probability is in `row.result` and its next state in `row.state`.
   * The run itself is synchronous native code that onnxruntime-node defers by one setImmediate, so
   * the caller's turn of the loop is not held. One batch at a time per InlineSilero: the buffers
   * are shared by every run of the same size.
   */
  async run(rate: SileroRate, rows: readonly BatchRow[]): Promise<void> {
    const b = rows.length;
    if (b === 0) return;
    if (b > MAX_INLINE_BATCH)
      throw new RangeError(`InlineSilero.run: ${b} rows, at most ${MAX_INLINE_BATCH}`);
    const t = this.#batch(rate, b);
    packBatch(rows, rowWidth(rate), t.input, t.state);
    await this.#session.run(t.feeds, t.fetches);
    unpackBatch(rows, t.nextState, t.probability);
  }

  #batch(rate: SileroRate, b: number): BatchTensors {
    const key = rate * 100 + b;
    let t = this.#tensors.get(key);
    if (t) return t;
    let sr = this.#rates.get(rate);
    if (!sr) {
      sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(rate)), []);
      this.#rates.set(rate, sr);
    }
    const width = rowWidth(rate);
    const input = new Float32Array(b * width);
    const state = new Float32Array(2 * b * STATE);
    const probability = new Float32Array(b);
    const nextState = new Float32Array(2 * b * STATE);
    t = {
      input,
      state,
      feeds: {
        input: new ort.Tensor("float32", input, [b, width]),
        state: new ort.Tensor("float32", state, [2, b, STATE]),
        sr,
      },
      fetches: {
        output: new ort.Tensor("float32", probability, [b, 1]),
        stateN: new ort.Tensor("float32", nextState, [2, b, STATE]),
      },
      probability,
      nextState,
    };
    this.#tensors.set(key, t);
    return t;
  }
}
