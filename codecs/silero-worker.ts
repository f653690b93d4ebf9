// The VAD's inference thread: holds the process's one Silero session and runs the batches the
// calls' streams send it (silero.ts), so inference never holds the event loop that paces audio.
// A batch's rows and states are in the memory shared with the event loop (silero-shared.ts): a
// request is the batch's id, a reply the same id once the probabilities and the next states are
// written back there. Whatever this thread allocates is collected here, never on the event loop.
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { createSileroSession, runBatch } from "./silero-session.ts";
import { rowWidth, STATE, sharedBatch } from "./silero-shared.ts";

/** Given at start: the buffer behind the shared batch. */
export interface SileroWorkerData {
  shared: SharedArrayBuffer;
}

/** A request: the id of the batch now in the shared buffers (its header says rate and size). */
export type BatchRequest = number;

export type WorkerReply =
  | { type: "ready" }
  | { type: "failed"; message: string }
  /** The batch `id` is done: results in the shared buffers. */
  | number
  | { type: "error"; id: number; message: string };

/**
 * This thread runs NICE_STEP nice steps below the event loop (a third of its CPU weight): when the
 * cores are busy, a batch waits a few ms, while the event loop (every call's audio and turns) and
 * V8's collector threads, whose pauses hold every call at once, get a core first. On Linux a
 * thread's nice is its own, and raising it needs no privilege. 4-minute SIP soaks at 200 calls,
 * the same otherwise: the main thread's longest pause 20.2 against 26.7 ms, scavenges p50 6.4
 * against 7.7 ms, bridge CPU 3,389 against 3,563 µs/call·s
 * (docs/dev/2026-11-29-soak-priorities-and-ramp.md).
 */
const NICE_STEP = 5;

function yieldToEventLoop(): void {
  if (process.platform !== "linux") return;
  try {
    setPriority(0, Math.min(19, getPriority(0) + NICE_STEP));
  } catch {
    // Not allowed here (a sandbox): the same priority as the event loop, as before.
  }
}

const port = parentPort;
if (port) {
  yieldToEventLoop();
  try {
    const shared = sharedBatch((workerData as SileroWorkerData).shared);
    const session = await createSileroSession();
    port.on("message", async (id: BatchRequest) => {
      try {
        const rate = shared.header[1] === 8000 ? 8000 : 16000;
        const batch = shared.header[2]!;
        const width = rowWidth(rate);
        // Copies out of the shared memory: onnxruntime takes its inputs from plain buffers.
        const input = shared.input.slice(0, batch * width);
        const state = shared.state.slice(0, 2 * batch * STATE);
        const r = await runBatch(session, rate, batch, input, state);
        shared.output.set(r.output);
        shared.state.set(r.state);
        port.postMessage(id satisfies WorkerReply);
      } catch (err) {
        port.postMessage({ type: "error", id, message: (err as Error).message } satisfies WorkerReply);
      }
    });
    port.postMessage({ type: "ready" } satisfies WorkerReply);
  } catch (err) {
    port.postMessage({ type: "failed", message: (err as Error).message } satisfies WorkerReply);
  }
}
