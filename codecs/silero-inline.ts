// Silero inference on the calling thread, one window at a time: the path for a few streams.
// Handing a lone window to the worker costs far more than the model: a message and a wake-up on
// each thread per window, and the 8 ms gathering pause, after which the model's run is cold
// (measured on the 2-core VM: ~150 µs for a run straight after another, 650-1000 µs after an
// 8 ms pause). With few streams there is no batch to gather, so the window runs here, in a
// session of this thread's own: the run is native code that holds the event loop for its
// duration, which a handful of streams can afford and hundreds cannot (silero.ts switches).
// Rows of Silero are independent, so the result is the one the worker would give.
import * as ort from "onnxruntime-node";
import { createSileroSession, type SileroRate } from "./silero-session.ts";
import { STATE } from "./silero-shared.ts";

/** What a stream exposes to be run: its rate, its context + window, its recurrent state (2 × 128). */
export interface InlineRow {
  readonly rate: SileroRate;
  readonly frame: Float32Array;
  readonly state: Float32Array;
  /** Made on the stream's first inline run and kept by it: no tensor or buffer per window. */
  inline?: InlineTensors;
}

/** A stream's feeds (over its own frame and state) and its outputs, written in place by each run. */
export interface InlineTensors {
  readonly feeds: ort.InferenceSession.FeedsType;
  readonly fetches: ort.InferenceSession.FetchesType;
  readonly probability: Float32Array;
  readonly nextState: Float32Array;
}

export class InlineSilero {
  readonly #session: ort.InferenceSession;
  readonly #rates = new Map<SileroRate, ort.Tensor>();

  private constructor(session: ort.InferenceSession) {
    this.#session = session;
  }

  static async load(): Promise<InlineSilero> {
    return new InlineSilero(await createSileroSession());
  }

  /**
   * Runs the row's window: resolves with the speech probability and leaves the next state in
   * `row.state`. The run itself is synchronous native code that onnxruntime-node defers by one
   * setImmediate, so the caller's frame is not held. Rows may run concurrently: each has its own
   * output buffers.
   */
  async run(row: InlineRow): Promise<number> {
    let t = row.inline;
    if (!t) {
      t = this.#tensors(row);
      row.inline = t;
    }
    await this.#session.run(t.feeds, t.fetches);
    row.state.set(t.nextState);
    return t.probability[0]!;
  }

  #tensors(row: InlineRow): InlineTensors {
    let sr = this.#rates.get(row.rate);
    if (!sr) {
      sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(row.rate)), []);
      this.#rates.set(row.rate, sr);
    }
    const probability = new Float32Array(1);
    const nextState = new Float32Array(2 * STATE);
    return {
      feeds: {
        input: new ort.Tensor("float32", row.frame, [1, row.frame.length]),
        state: new ort.Tensor("float32", row.state, [2, 1, STATE]),
        sr,
      },
      fetches: {
        output: new ort.Tensor("float32", probability, [1, 1]),
        stateN: new ort.Tensor("float32", nextState, [2, 1, STATE]),
      },
      probability,
      nextState,
    };
  }
}
