// The memory the VAD's event loop and its inference worker share for one batch (silero.ts,
// silero-worker.ts). The calls' windows and states are written straight into it and the results
// read straight out of it, so a batch costs the event loop no array, no copy into a message and no
// off-heap buffer to collect later; the messages between the threads carry only the batch's id.
// One batch is in the worker at a time, so one set of buffers serves every batch.

/** Floats of recurrent state per layer and stream (Silero v5: [2, batch, 128]). */
export const STATE = 128;
/** Most windows in one inference (a few ms of the worker's time). */
export const MAX_BATCH = 64;
/** Floats in one row of a batch: 64 samples of context + 512 new at 16 kHz, 32 + 256 at 8 kHz. */
export function rowWidth(rate: 16000 | 8000): number {
  return rate === 16000 ? 576 : 288;
}
const MAX_WIDTH = rowWidth(16000);

export interface SharedBatch {
  readonly buffer: SharedArrayBuffer;
  /** id, rate, batch size of the batch in the buffers. */
  readonly header: Int32Array;
  /** Rows of `width` floats (context + window), one per stream, from index 0. */
  readonly input: Float32Array;
  /** [2, batch, 128]: layer-major, then the batch row; the worker writes the next state back here. */
  readonly state: Float32Array;
  /** Speech probability per row, written by the worker. */
  readonly output: Float32Array;
}

/** Views over a shared buffer (made by the event loop with no argument, given to the worker). */
export function sharedBatch(buffer?: SharedArrayBuffer): SharedBatch {
  const floats = MAX_BATCH * MAX_WIDTH + 2 * MAX_BATCH * STATE + MAX_BATCH;
  const buf = buffer ?? new SharedArrayBuffer(16 + 4 * floats);
  let at = 16;
  const view = (n: number) => {
    const v = new Float32Array(buf, at, n);
    at += 4 * n;
    return v;
  };
  return {
    buffer: buf,
    header: new Int32Array(buf, 0, 4),
    input: view(MAX_BATCH * MAX_WIDTH),
    state: view(2 * MAX_BATCH * STATE),
    output: view(MAX_BATCH),
  };
}

/** A stream as a batch sees it: its context + window, its recurrent state (2 × 128), its answer. */
export interface BatchRow {
  readonly frame: Float32Array;
  readonly state: Float32Array;
  /** The speech probability of the row's window, once its batch has run. */
  result: number;
}

/**
 * Writes the rows' windows (rows of `width` floats) and states into a batch's buffers. State is
 * [2, batch, 128]: layer-major, then the batch row. Element loops: no view is made per row.
 */
export function packBatch(
  rows: readonly BatchRow[],
  width: number,
  input: Float32Array,
  state: Float32Array,
): void {
  const b = rows.length;
  for (let i = 0; i < b; i++) {
    const row = rows[i]!;
    input.set(row.frame, i * width);
    const own = row.state;
    const layer0 = i * STATE;
    const layer1 = (b + i) * STATE;
    for (let k = 0; k < STATE; k++) {
      state[layer0 + k] = own[k]!;
      state[layer1 + k] = own[STATE + k]!;
    }
  }
}

/** Reads each row's next state and probability back out of a batch that has run. */
export function unpackBatch(rows: readonly BatchRow[], state: Float32Array, output: Float32Array): void {
  const b = rows.length;
  for (let i = 0; i < b; i++) {
    const row = rows[i]!;
    const own = row.state;
    const layer0 = i * STATE;
    const layer1 = (b + i) * STATE;
    for (let k = 0; k < STATE; k++) {
      own[k] = state[layer0 + k]!;
      own[STATE + k] = state[layer1 + k]!;
    }
    row.result = output[i]!;
  }
}
