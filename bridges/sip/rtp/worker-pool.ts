// The bridge's side of the RTP worker (media-worker.ts): an RtpPortPool whose ports are bound in
// the worker, and for each call a media link that forwards what the session asks and hands on
// what the worker reports. The session reads queuedMs()/playedMs() synchronously, so the link
// keeps both on this side: queuedMs from what it was given, playedMs from the worker's reports
// (at most FLUSH_MS old). A clear() cannot call back what the worker sent meanwhile: the worker
// answers with where its queue stood, and the link maps the worker's later positions onto its
// own timeline from then on (epochs tell positions before the clear from those after).
import { Worker } from "node:worker_threads";
import type { Logger } from "../../../src/core/log.ts";
import { settleWithin } from "../../../src/core/settle-within.ts";
import { type AgentAudio, OPUS_PACKET_MS } from "../../transport.ts";
import type { NegotiatedMedia, RtpPortPool } from "../media-port.ts";
import type {
  RtpMediaEndpoint,
  RtpMediaEvents,
  RtpMediaLink,
  RtpMediaOptions,
  RtpMediaStats,
} from "./call-media.ts";
import { eventPacketCount } from "./dtmf-send.ts";
import { decodedRate } from "./payload.ts";
import { WorkerBacklog } from "./worker-backlog.ts";
import type { FromWorker, FromWorkerEvent, RtpWorkerData, ToWorker } from "./worker-protocol.ts";

/** Why a worker's calls end when the bridge stops it (close()). */
// The sources run as .ts in a checkout and as compiled .js in the installed package.
const SOURCE_EXT = import.meta.url.endsWith(".ts") ? "ts" : "js";
const STOPPED = "the RTP worker was stopped";
/**
 * How long close() waits for a worker still loading before it terminates it anyway. Terminating a
 * worker while it loads a native addon (@discordjs/opus's init) aborts the whole process
 * ("FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw"): a bridge closed within a second of
 * its start did (CI, 2026-12-06). Loading takes ~0.2 s; the bound is for a worker that never loads.
 */
const LOAD_WAIT_MS = 10_000;

class WorkerMediaLink implements RtpMediaLink {
  readonly inputRate: number;
  readonly stats = undefined;
  readonly events: RtpMediaEvents;
  readonly #id: number;
  readonly #post: (msg: ToWorker) => void;
  readonly #pcm: boolean;
  /** The telephone-event payload type the SDP agreed (re-INVITEs may change it). */
  #telephoneEventPt: number | undefined;
  #queued = 0;
  #played = 0;
  #epoch = 0;
  /** Worker position − ours, for reports of the current epoch. */
  #offset = 0;
  #closed: Promise<RtpMediaStats> | undefined;
  #resolveClosed: ((stats: RtpMediaStats) => void) | undefined;
  #rejectClosed: ((err: Error) => void) | undefined;
  #lost: string | undefined;

  constructor(id: number, opts: RtpMediaOptions, events: RtpMediaEvents, post: (msg: ToWorker) => void) {
    this.#id = id;
    this.#post = post;
    this.events = events;
    this.inputRate = decodedRate(opts.media.codec.name);
    this.#pcm = opts.media.codec.name !== "opus";
    this.#telephoneEventPt = opts.media.telephoneEventPt;
    post({
      op: "start",
      id,
      media: opts.media,
      mediaTimeoutMs: opts.mediaTimeoutMs,
      ...(opts.reorderWindowMs !== undefined ? { reorderWindowMs: opts.reorderWindowMs } : {}),
    });
  }

  play(audio: AgentAudio): void {
    if (this.#closed) return;
    const pcm = audio instanceof Int16Array;
    if (pcm !== this.#pcm)
      throw new TypeError(
        this.#pcm
          ? "this SIP call plays PCM at 8 kHz (its output is pcm), not Opus packets"
          : "this SIP call plays Opus packets (its output is opus), not PCM",
      );
    const ms = pcm ? audio.length / 8 : audio.packets.length * OPUS_PACKET_MS;
    if (ms === 0) return;
    this.#queued += ms;
    this.#post({ op: "play", id: this.#id, audio });
  }

  sendDtmf(digit: string, toneMs: number): void {
    if (this.#closed) return;
    if (this.#telephoneEventPt === undefined)
      throw new Error("the call negotiated no telephone-event payload type");
    this.#queued += eventPacketCount(toneMs) * 20;
    this.#post({ op: "send-dtmf", id: this.#id, digit, toneMs });
  }

  clear(): number {
    if (this.#closed) return 0;
    const dropped = this.#queued - this.#played;
    this.#queued = this.#played;
    this.#epoch++;
    this.#post({ op: "clear", id: this.#id, epoch: this.#epoch });
    return dropped;
  }

  queuedMs(): number {
    return this.#queued;
  }

  playedMs(): number {
    return this.#played;
  }

  update(media: NegotiatedMedia): void {
    this.#telephoneEventPt = media.telephoneEventPt;
    if (!this.#closed) this.#post({ op: "update", id: this.#id, media });
  }

  close(): Promise<RtpMediaStats> {
    if (!this.#closed) {
      const lost = this.#lost;
      this.#closed = lost
        ? Promise.reject(new Error(lost))
        : new Promise((resolve, reject) => {
            this.#resolveClosed = resolve;
            this.#rejectClosed = reject;
          });
      this.#post({ op: "close", id: this.#id });
    }
    return this.#closed;
  }

  // ---- from the worker ----

  /**
   * The worker's answer to the clear of `epoch`. Until it comes, reports of the new epoch cannot
   * (the worker sends them after it), so #played is still where the clear left it.
   */
  cleared(epoch: number, workerSentMs: number): void {
    if (epoch === this.#epoch) this.#offset = workerSentMs - this.#played;
  }

  moved(epoch: number, workerMs: number): void {
    if (epoch !== this.#epoch || this.#closed) return;
    const ms = Math.min(this.#queued, workerMs - this.#offset);
    if (ms <= this.#played) return;
    this.#played = ms;
    this.events.played(ms);
  }

  ended(stats: RtpMediaStats): void {
    this.#resolveClosed?.(stats);
  }

  /** The worker is gone, and the call's media with it. */
  lost(reason: string): void {
    this.#lost = reason;
    this.#rejectClosed?.(new Error(reason));
    this.events.lost(reason);
  }
}

class WorkerRtpEndpoint implements RtpMediaEndpoint {
  readonly port: number;
  readonly #id: number;
  readonly #worker: RtpWorker;
  #released = false;
  #started = false;

  constructor(worker: RtpWorker, id: number, port: number) {
    this.#worker = worker;
    this.#id = id;
    this.port = port;
  }

  startMedia(opts: RtpMediaOptions, events: RtpMediaEvents): RtpMediaLink {
    if (this.#released || this.#started)
      throw new Error(`RTP port ${this.port}: its media was started or released already`);
    this.#started = true;
    return this.#worker.startMedia(this.#id, opts, events);
  }

  /** Frees a port whose call never started (the media's own close frees it otherwise). */
  close(): void {
    if (this.#released) return;
    this.#released = true;
    if (!this.#started) this.#worker.release(this.#id);
  }
}

export interface RtpWorkerOptions extends Omit<RtpWorkerData, "backlog"> {
  readonly log: Logger;
  /** Told of caller frames the worker dropped while this thread was behind (worker-backlog.ts). */
  readonly onShed?: (frames: number, bytes: number) => void;
}

/** Starts the RTP worker; it serves as the SIP server's port pool. */
export function startRtpWorker(opts: RtpWorkerOptions): RtpWorker {
  return new RtpWorker(opts);
}

export class RtpWorker implements RtpPortPool {
  readonly #worker: Worker;
  readonly #log: Logger;
  readonly #links = new Map<number, WorkerMediaLink>();
  readonly #opening = new Map<
    number,
    { resolve: (e: WorkerRtpEndpoint) => void; reject: (e: Error) => void }
  >();
  #nextReq = 1;
  #open = 0;
  #outbox: ToWorker[] = [];
  #flushing: NodeJS.Immediate | undefined;
  #dead: string | undefined;
  /** Settles once the worker has loaded (or exited): only then may it be terminated. */
  readonly #loaded: Promise<void>;
  #setLoaded: () => void = () => {};
  readonly #backlog = new WorkerBacklog();
  readonly #onShed: RtpWorkerOptions["onShed"];
  /** Drops already reported. */
  #shed = { frames: 0, samples: 0 };
  #shedLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(opts: RtpWorkerOptions) {
    this.#log = opts.log;
    this.#onShed = opts.onShed;
    const data: RtpWorkerData = { host: opts.host, ports: opts.ports, backlog: this.#backlog.shared };
    this.#worker = new Worker(new URL(`./media-worker.${SOURCE_EXT}`, import.meta.url), {
      workerData: data,
      name: "rtp",
    });
    this.#loaded = new Promise((resolve) => {
      this.#setLoaded = resolve;
    });
    this.#worker.on("message", (batch: FromWorker) => this.#batch(batch));
    this.#worker.on("error", (err: Error) => this.#died(`the RTP worker failed: ${err.message}`));
    this.#worker.on("exit", (code) => {
      this.#setLoaded();
      this.#died(`the RTP worker exited (code ${code})`);
    });
  }

  /** Endpoints open now (for leak checks). */
  get inUse(): number {
    return this.#open;
  }

  open(): Promise<RtpMediaEndpoint> {
    if (this.#dead) return Promise.reject(new Error(this.#dead));
    const req = this.#nextReq++;
    return new Promise((resolve, reject) => {
      this.#opening.set(req, { resolve, reject });
      this.#send({ op: "open", req });
    });
  }

  startMedia(id: number, opts: RtpMediaOptions, events: RtpMediaEvents): RtpMediaLink {
    const link = new WorkerMediaLink(id, opts, events, (msg) => this.#send(msg));
    this.#links.set(id, link);
    return link;
  }

  release(id: number): void {
    this.#open--;
    this.#send({ op: "release", id });
  }

  /**
   * Stops the worker once the calls' media has closed (their counts logged), waiting 1 s at most,
   * and once it has loaded (LOAD_WAIT_MS).
   */
  async close(): Promise<void> {
    for (let waited = 0; this.#links.size > 0 && waited < 1000; waited += 20)
      await new Promise((r) => setTimeout(r, 20));
    this.#died(STOPPED);
    if (!(await settleWithin(this.#loaded, LOAD_WAIT_MS)))
      this.#log.warn({ waitedMs: LOAD_WAIT_MS }, "the RTP worker had not loaded; terminated anyway");
    await this.#worker.terminate();
  }

  #send(msg: ToWorker): void {
    if (this.#dead) return;
    this.#outbox.push(msg);
    // One message per turn of the loop, whatever the sessions asked in it.
    this.#flushing ??= setImmediate(() => {
      this.#flushing = undefined;
      const out = this.#outbox;
      this.#outbox = [];
      this.#worker.postMessage(out);
    });
  }

  #batch(batch: FromWorker): void {
    this.#backlog.taken();
    this.#reportShed();
    for (const event of batch.events) this.#event(event);
    let offset = 0;
    for (let i = 0; i < batch.frameIds.length; i++) {
      const length = batch.frameLengths[i]!;
      this.#links.get(batch.frameIds[i]!)?.events.frame(batch.pcm.subarray(offset, offset + length));
      offset += length;
    }
    const p = batch.played;
    for (let i = 0; i < p.length; i += 3) this.#links.get(p[i]!)?.moved(p[i + 1]!, p[i + 2]!);
  }

  #reportShed(): void {
    const now = this.#backlog.dropped;
    const frames = now.frames - this.#shed.frames;
    if (frames === 0) return;
    const samples = now.samples - this.#shed.samples;
    const at = performance.now();
    if (at - this.#shedLoggedAt > 10_000) {
      this.#shedLoggedAt = at;
      this.#log.warn(
        { droppedFrames: frames, droppedSoFar: now.frames, behindBatches: this.#backlog.behind },
        "sip media: this thread fell behind the RTP worker; caller frames dropped meanwhile",
      );
    }
    this.#shed = now;
    this.#onShed?.(frames, samples * 2);
  }

  #event(e: FromWorkerEvent): void {
    switch (e.op) {
      case "ready":
        this.#setLoaded();
        return;
      case "opened": {
        const waiting = this.#opening.get(e.req);
        this.#opening.delete(e.req);
        this.#open++;
        if (waiting) waiting.resolve(new WorkerRtpEndpoint(this, e.id, e.port));
        else this.release(e.id);
        return;
      }
      case "open-failed": {
        const waiting = this.#opening.get(e.req);
        this.#opening.delete(e.req);
        waiting?.reject(new Error(e.message));
        return;
      }
      case "error":
        this.#log.error({ err: e.message }, "RTP worker: a request failed");
        return;
    }
    const link = this.#links.get(e.id);
    if (!link) return;
    switch (e.op) {
      case "dtmf":
        link.events.dtmf(e.digit);
        return;
      case "latched":
        link.events.latched(e.address, e.port);
        return;
      case "cleared":
        link.cleared(e.epoch, e.sentMs);
        return;
      case "timed-out":
        link.events.timedOut(e.silentForMs);
        return;
      case "socket-error":
        link.events.socketError(e.message);
        return;
      case "closed":
        this.#links.delete(e.id);
        this.#open--;
        link.ended(e.stats);
        return;
    }
  }

  #died(reason: string): void {
    if (this.#dead) return;
    this.#dead = reason;
    const calls = this.#links.size;
    // Stopped with no call left: the end of a clean shutdown (every drained instance), not an error.
    if (reason === STOPPED && calls === 0) this.#log.info(reason);
    else this.#log.error({ calls }, `${reason}: ending its calls`);
    for (const waiting of this.#opening.values()) waiting.reject(new Error(reason));
    this.#opening.clear();
    const links = [...this.#links.values()];
    this.#links.clear();
    for (const link of links) link.lost(reason);
  }
}
