// A pool of long-lived espeak-ng workers (native/espeak/worker.c). Each worker is one process that
// keeps espeak's data loaded and serves requests one after another, streaming the PCM of a sentence
// while it is synthesized; the pool spreads requests over the workers by queue length. No process is
// spawned per sentence, which keeps first audio at a few milliseconds.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import { refuse } from "../busy.ts";
import type { SynthesisRequest, TtsEngine } from "./engine.ts";

export const ESPEAK_WORKER_PATH = fileURLToPath(
  new URL("../../../../native/build/espeak-worker", import.meta.url),
);

const RATE_MIN = 80;
const RATE_MAX = 450;

interface Job {
  id: number;
  line: string;
  onPcm: (pcm: Int16Array) => void;
  resolve: () => void;
  reject: (err: Error) => void;
}

class Worker {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly queue: Job[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private ready = false;
  private dead: Error | null = null;
  readonly started: Promise<number>;

  constructor(path: string, onExit: (w: Worker) => void) {
    this.proc = spawn(path, [], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    this.proc.stderr.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    this.started = new Promise((resolve, reject) => {
      this.proc.stdout.on("data", (chunk: Buffer) => {
        this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
        if (!this.ready) {
          const nl = this.buf.indexOf(10);
          if (nl < 0) return;
          const m = /^ready (\d+)$/.exec(this.buf.subarray(0, nl).toString());
          if (!m) return reject(new Error(`espeak worker: unexpected greeting`));
          this.ready = true;
          this.buf = this.buf.subarray(nl + 1);
          resolve(Number(m[1]));
        }
        this.drain();
      });
      this.proc.on("error", (err) => this.fail(err, reject, onExit));
      this.proc.on("exit", (code, sig) =>
        this.fail(
          new Error(`espeak worker exited (${sig ?? code})${stderr ? `: ${stderr.trim()}` : ""}`),
          reject,
          onExit,
        ),
      );
    });
    this.proc.stdin.on("error", () => {}); // reported through 'exit'
  }

  get load(): number {
    return this.dead ? Number.POSITIVE_INFINITY : this.queue.length;
  }

  submit(job: Job): void {
    if (this.dead) {
      job.reject(this.dead);
      return;
    }
    this.queue.push(job);
    this.proc.stdin.write(job.line);
  }

  private drain(): void {
    while (this.buf.length >= 8) {
      const id = this.buf.readUInt32LE(0);
      const len = this.buf.readInt32LE(4);
      const body = Math.abs(len);
      if (this.buf.length < 8 + body) return;
      const payload = this.buf.subarray(8, 8 + body);
      this.buf = this.buf.subarray(8 + body);
      const job = this.queue[0];
      if (!job || job.id !== id) continue; // cannot happen: the worker answers in order
      if (len > 0) {
        // Copy into an aligned buffer the consumer may keep.
        const pcm = new Int16Array(len >> 1);
        Buffer.from(pcm.buffer).set(payload);
        job.onPcm(pcm);
      } else {
        this.queue.shift();
        if (len === 0) job.resolve();
        else job.reject(new Error(`espeak-ng: ${payload.toString()}`));
      }
    }
  }

  private fail(err: Error, reject: (e: Error) => void, onExit: (w: Worker) => void): void {
    if (this.dead) return;
    this.dead = err;
    reject(err);
    for (const job of this.queue.splice(0)) job.reject(err);
    onExit(this);
  }

  kill(): void {
    this.dead ??= new Error("espeak worker closed");
    this.proc.stdin.end();
    this.proc.kill();
  }
}

export interface EspeakPoolOptions {
  /** Worker processes; default the number of CPUs (at least 2). */
  size?: number;
  workerPath?: string;
  /**
   * Sentences queued on a worker at most before another is refused (busy.ts): a starved machine
   * would otherwise queue every call's text in the workers' pipes. Default 64.
   */
  maxQueuedPerWorker?: number;
}

export class EspeakPool implements TtsEngine {
  private readonly workers: Worker[] = [];
  private readonly size: number;
  private readonly path: string;
  private readonly maxQueued: number;
  private nextId = 1;
  private closed = false;
  /** espeak-ng's output rate, known once the first worker is up (22050 for the Debian build). */
  sampleRate = 22050;

  constructor(opts: EspeakPoolOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.max(2, cpus().length));
    this.path = opts.workerPath ?? ESPEAK_WORKER_PATH;
    this.maxQueued = Math.max(1, opts.maxQueuedPerWorker ?? 64);
    if (!existsSync(this.path)) {
      throw new Error(`espeak worker not built (${this.path}): run native/build.sh`);
    }
  }

  /** Starts every worker and waits until they are ready. */
  async start(): Promise<void> {
    while (this.workers.length < this.size) this.spawn();
    const rates = await Promise.all(this.workers.map((w) => w.started));
    this.sampleRate = rates[0]!;
  }

  private spawn(): Worker {
    const w = new Worker(this.path, (dead) => {
      const i = this.workers.indexOf(dead);
      if (i >= 0) this.workers.splice(i, 1);
    });
    w.started.catch(() => {}); // failures reach the jobs
    this.workers.push(w);
    return w;
  }

  synthesize(req: SynthesisRequest, onPcm: (pcm: Int16Array) => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error("TTS engine closed"));
    // The worker protocol is one line per request with TAB-separated fields.
    const text = req.text.replace(/\p{Cc}+/gu, " ").trim();
    if (!text) return Promise.resolve();
    while (this.workers.length < this.size) this.spawn();
    let best = this.workers[0]!;
    for (const w of this.workers) if (w.load < best.load) best = w;
    if (best.load >= this.maxQueued && best.load !== Number.POSITIVE_INFINITY)
      return Promise.reject(refuse("tts", `tts engine busy: ${best.load} sentences queued on every worker`));
    const v = req.voice;
    const wpm = Math.round(Math.min(RATE_MAX, Math.max(RATE_MIN, v.wpm * req.speed)));
    const id = this.nextId++;
    if (this.nextId > 0xffff_fff0) this.nextId = 1;
    const line = `${id}\t${v.espeak}\t${wpm}\t${v.pitch}\t${v.range}\t${text}\n`;
    return new Promise((resolve, reject) => best.submit({ id, line, onPcm, resolve, reject }));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.workers.splice(0)) w.kill();
  }
}
