// The messages between the bridge's thread and the RTP worker (media-worker.ts). Each side sends
// batches, never one message per packet: the bridge one per turn of its loop (what the sessions
// asked), the worker one per FLUSH_MS (every call's caller frames and events of that span), so
// 200 calls cost the bridge's loop ~100 wake-ups a second instead of 10,000 datagrams.
import type { AgentAudio } from "../../transport.ts";
import type { NegotiatedMedia } from "../media-port.ts";
import type { RtpMediaStats } from "./call-media.ts";

/** How long the worker gathers frames and events before it posts them, ms. */
export const FLUSH_MS = 10;

export interface RtpWorkerData {
  /** Address RTP binds to (`sip.host`). */
  readonly host: string;
  /** `sip.rtpPorts`, "LOW-HIGH". */
  readonly ports: string;
  /** The channel's backlog counters (worker-backlog.ts), shared with the bridge's thread. */
  readonly backlog: SharedArrayBuffer;
}

/** Endpoints and calls are named by an id the worker gives at open (ports are reused). */
export type ToWorker =
  | { readonly op: "open"; readonly req: number }
  | { readonly op: "release"; readonly id: number }
  | {
      readonly op: "start";
      readonly id: number;
      readonly media: NegotiatedMedia;
      readonly mediaTimeoutMs: number;
      readonly reorderWindowMs?: number;
    }
  | { readonly op: "play"; readonly id: number; readonly audio: AgentAudio }
  /** A keypad digit as RFC 4733 events after the queued voice (dtmf-send.ts). */
  | { readonly op: "send-dtmf"; readonly id: number; readonly digit: string; readonly toneMs: number }
  /** `epoch` counts the call's clears: the worker's positions after it are on a new footing. */
  | { readonly op: "clear"; readonly id: number; readonly epoch: number }
  | { readonly op: "update"; readonly id: number; readonly media: NegotiatedMedia }
  | { readonly op: "close"; readonly id: number };

export type FromWorkerEvent =
  /** Its modules (the native addons among them) are loaded: from now on it may be terminated. */
  | { readonly op: "ready" }
  | { readonly op: "opened"; readonly req: number; readonly id: number; readonly port: number }
  | { readonly op: "open-failed"; readonly req: number; readonly message: string }
  | { readonly op: "dtmf"; readonly id: number; readonly digit: string }
  | { readonly op: "latched"; readonly id: number; readonly address: string; readonly port: number }
  /** The worker's queue position when the clear of `epoch` reached it (all it had sent is heard). */
  | { readonly op: "cleared"; readonly id: number; readonly epoch: number; readonly sentMs: number }
  | { readonly op: "timed-out"; readonly id: number; readonly silentForMs: number }
  | { readonly op: "socket-error"; readonly id: number; readonly message: string }
  | { readonly op: "closed"; readonly id: number; readonly stats: RtpMediaStats }
  /** Something went wrong in the worker that no call caused; the bridge logs it. */
  | { readonly op: "error"; readonly message: string };

export interface FromWorker {
  /** Caller frames of the span, back to back; `frameIds[i]` owns `frameLengths[i]` samples. */
  readonly pcm: Int16Array;
  readonly frameIds: Int32Array;
  readonly frameLengths: Int32Array;
  /** In the order they happened. */
  readonly events: readonly FromWorkerEvent[];
  /** The newest playout position of each call that moved: [id, epoch, ms] triples, after the events. */
  readonly played: Float64Array;
}
