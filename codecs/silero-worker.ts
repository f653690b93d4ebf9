// The VAD's inference thread: holds the process's one Silero session and runs the batches the
// calls' streams send it (silero.ts), so inference never holds the event loop that paces audio.
import { parentPort } from "node:worker_threads";
import { createSileroSession, runBatch, type SileroRate } from "./silero-session.ts";

export interface BatchRequest {
  id: number;
  rate: SileroRate;
  batch: number;
  input: Float32Array;
  state: Float32Array;
}

export type WorkerReply =
  | { type: "ready" }
  | { type: "failed"; message: string }
  | { type: "result"; id: number; output: Float32Array; state: Float32Array }
  | { type: "error"; id: number; message: string };

const port = parentPort;
if (port) {
  try {
    const session = await createSileroSession();
    port.on("message", async (req: BatchRequest) => {
      try {
        const r = await runBatch(session, req.rate, req.batch, req.input, req.state);
        // Copies: the tensors' buffers belong to onnxruntime.
        const output = Float32Array.from(r.output);
        const state = Float32Array.from(r.state);
        const reply: WorkerReply = { type: "result", id: req.id, output, state };
        port.postMessage(reply, [output.buffer, state.buffer]);
      } catch (err) {
        port.postMessage({
          type: "error",
          id: req.id,
          message: (err as Error).message,
        } satisfies WorkerReply);
      }
    });
    port.postMessage({ type: "ready" } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({ type: "failed", message: (err as Error).message } satisfies WorkerReply);
  }
}
