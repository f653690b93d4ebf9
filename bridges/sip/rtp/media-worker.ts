// The RTP worker: a thread whose loop does nothing but the calls' packets (receive, jitter
// buffer, decode, queueing the agent's voice for the native send thread), so the caller's frames
// are not held up while the bridge's thread runs the sessions, the recognizer uploads and the
// garbage collector. Each call's media is the
// same RtpCallMedia that runs on the bridge's thread in tests; only the events cross over, in
// batches (worker-protocol.ts).
import type dgram from "node:dgram";
import { parentPort, workerData } from "node:worker_threads";
import { systemClock } from "../../../src/core/clock.ts";
import type { RtpMediaLink } from "./call-media.ts";
import { type UdpRtpEndpoint, UdpRtpPortPool } from "./port-pool.ts";
import { WorkerBacklog } from "./worker-backlog.ts";
import {
  FLUSH_MS,
  type FromWorker,
  type FromWorkerEvent,
  type RtpWorkerData,
  type ToWorker,
} from "./worker-protocol.ts";

const port = parentPort;
if (!port) throw new Error("media-worker.ts runs as a worker thread (new Worker), not on its own");
const data = workerData as RtpWorkerData;
const pool = new UdpRtpPortPool({ host: data.host, ports: data.ports });
const backlog = new WorkerBacklog(data.backlog);

/** Datagrams kept from a port's opening until its call's media starts: 1 s at 20 ms. */
const HELD_DATAGRAMS = 50;

interface Call {
  readonly endpoint: UdpRtpEndpoint;
  /** What arrived before the media started (the caller may send as soon as it has our answer). */
  held: Array<[Buffer, dgram.RemoteInfo]>;
  readonly hold: (msg: Buffer, rinfo: dgram.RemoteInfo) => void;
  media: RtpMediaLink | undefined;
  /** Clears processed: the epoch of the positions reported. */
  epoch: number;
  /** The newest playout position, not yet posted if `played` lists the call. */
  playedMs: number;
}
const calls = new Map<number, Call>();
let nextId = 1;

// ---- the batch going to the bridge ----
let pcm = new Int16Array(8192);
let pcmFill = 0;
let frameIds: number[] = [];
let frameLengths: number[] = [];
let events: FromWorkerEvent[] = [];
/** Calls whose playout moved since the last batch (their newest position is on the call: no object per report). */
const played = new Set<number>();
let flushTimer: NodeJS.Timeout | undefined;
let flushSoon: NodeJS.Immediate | undefined;

function schedule(urgent = false): void {
  if (urgent) {
    flushSoon ??= setImmediate(flush);
    return;
  }
  flushTimer ??= setTimeout(flush, FLUSH_MS);
}

function flush(): void {
  if (flushTimer) clearTimeout(flushTimer);
  if (flushSoon) clearImmediate(flushSoon);
  flushTimer = undefined;
  flushSoon = undefined;
  const playedTriples = new Float64Array(played.size * 3);
  let i = 0;
  for (const id of played) {
    const call = calls.get(id);
    if (!call) continue;
    playedTriples[i++] = id;
    playedTriples[i++] = call.epoch;
    playedTriples[i++] = call.playedMs;
  }
  played.clear();
  const batch: FromWorker = {
    pcm: pcm.slice(0, pcmFill),
    frameIds: Int32Array.from(frameIds),
    frameLengths: Int32Array.from(frameLengths),
    events,
    played: playedTriples,
  };
  pcmFill = 0;
  frameIds = [];
  frameLengths = [];
  events = [];
  backlog.posted();
  port?.postMessage(batch, [
    batch.pcm.buffer as ArrayBuffer,
    batch.frameIds.buffer as ArrayBuffer,
    batch.frameLengths.buffer as ArrayBuffer,
    playedTriples.buffer as ArrayBuffer,
  ]);
}

function emit(event: FromWorkerEvent, urgent = false): void {
  events.push(event);
  schedule(urgent);
}

function frame(id: number, samples: Int16Array): void {
  if (!backlog.admit(samples.length)) return;
  if (pcmFill + samples.length > pcm.length) {
    const grown = new Int16Array(Math.max(pcm.length * 2, pcmFill + samples.length));
    grown.set(pcm.subarray(0, pcmFill));
    pcm = grown;
  }
  pcm.set(samples, pcmFill);
  pcmFill += samples.length;
  frameIds.push(id);
  frameLengths.push(samples.length);
  schedule();
}

// ---- what the bridge asks ----
async function open(req: number): Promise<void> {
  try {
    const endpoint = await pool.openUdp();
    const id = nextId++;
    const held: Call["held"] = [];
    const hold = (msg: Buffer, rinfo: dgram.RemoteInfo) => {
      if (held.length < HELD_DATAGRAMS) held.push([msg, rinfo]);
    };
    endpoint.socket.on("message", hold);
    calls.set(id, { endpoint, held, hold, media: undefined, epoch: 0, playedMs: 0 });
    emit({ op: "opened", req, id, port: endpoint.port }, true);
  } catch (err) {
    emit({ op: "open-failed", req, message: err instanceof Error ? err.message : String(err) }, true);
  }
}

function start(msg: Extract<ToWorker, { op: "start" }>): void {
  const call = calls.get(msg.id);
  if (!call || call.media) return;
  const id = msg.id;
  call.media = call.endpoint.startMedia(
    {
      media: msg.media,
      mediaTimeoutMs: msg.mediaTimeoutMs,
      clock: systemClock,
      ...(msg.reorderWindowMs !== undefined ? { reorderWindowMs: msg.reorderWindowMs } : {}),
    },
    {
      frame: (samples) => frame(id, samples),
      dtmf: (digit) => emit({ op: "dtmf", id, digit }),
      played: (ms) => {
        call.playedMs = ms;
        played.add(id);
        schedule();
      },
      latched: (address, p) => emit({ op: "latched", id, address, port: p }),
      timedOut: (silentForMs) => emit({ op: "timed-out", id, silentForMs }, true),
      socketError: (message) => emit({ op: "socket-error", id, message }),
      // Only a link across threads loses its media; this one is where the packets are.
      lost: () => {},
    },
  );
  const socket = call.endpoint.socket;
  socket.off("message", call.hold);
  for (const [msg, rinfo] of call.held.splice(0)) socket.emit("message", msg, rinfo);
}

function handle(msg: ToWorker): void {
  switch (msg.op) {
    case "open":
      void open(msg.req);
      return;
    case "release": {
      const call = calls.get(msg.id);
      if (call && !call.media) {
        calls.delete(msg.id);
        call.endpoint.close();
      }
      return;
    }
    case "start":
      start(msg);
      return;
  }
  const call = calls.get(msg.id);
  const media = call?.media;
  if (!call || !media) return;
  switch (msg.op) {
    case "play":
      media.play(msg.audio);
      return;
    case "send-dtmf":
      media.sendDtmf(msg.digit, msg.toneMs);
      return;
    case "clear":
      media.clear();
      call.epoch = msg.epoch;
      played.delete(msg.id);
      emit({ op: "cleared", id: msg.id, epoch: msg.epoch, sentMs: media.queuedMs() });
      return;
    case "update":
      media.update(msg.media);
      return;
    case "close":
      calls.delete(msg.id);
      played.delete(msg.id);
      void Promise.resolve(media.close()).then((stats) => emit({ op: "closed", id: msg.id, stats }, true));
      return;
  }
}

port.on("message", (batch: ToWorker[]) => {
  for (const msg of batch) {
    try {
      handle(msg);
    } catch (err) {
      emit({ op: "error", message: `${msg.op}: ${err instanceof Error ? err.message : String(err)}` }, true);
    }
  }
});

emit({ op: "ready" }, true);
