// One Asterisk AudioSocket connection as the session sees it (the transport port).
// Inbound: signed-linear payloads (any length) → 20 ms Int16 frames at the connection's rate,
// decoded into one reused frame. Outbound: play() → pacer → 20 ms audio frames of the same
// kind Asterisk sends, written straight to the socket. Asterisk writes what it receives to the
// channel at once, with no deep buffer of its own, so the pacer keeps a small lead and what
// has been sent counts as heard: playedMs is the audio sent, at most one lead ahead of the ear.

import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { HeldEvents } from "../held-events.ts";
import { Pacer } from "../pacer.ts";
import type { AgentAudio, CallInfo, CallTransport, TransportListener } from "../transport.ts";
import { audioKind, HANGUP_FRAME, HEADER_BYTES, writeHeader } from "./framing.ts";

/** The part of a TCP socket the transport uses (net.Socket fits). */
export interface AudioSocketSink {
  write(bytes: Uint8Array): boolean;
  /** Bytes handed to write() not yet taken by the kernel. */
  readonly writableLength: number;
  /** Half-closes after what was written (the hang-up frame) has gone out. */
  end(): void;
  destroy(): void;
}

export interface AudioSocketCallOptions {
  connection: AudioSocketSink;
  /** The call's UUID, 8-4-4-4-12. */
  callId: string;
  /** Sample rate of the connection's audio, both ways. */
  rate: number;
  /** Logger for this call (already carrying callId). */
  log: Logger;
  clock: Clock;
  /** Most outbound audio ahead of Asterisk's playout, ms (default 60). */
  leadMs?: number;
  /** Outbound audio not yet taken by the kernel beyond which frames are dropped, ms (default 1000). */
  maxBackloggedMs?: number;
  /** After a hang-up, how long Asterisk gets to close before the socket is destroyed, ms (default 2000). */
  closeGraceMs?: number;
}

const FRAME_MS = 20;

export class AudioSocketCallTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: { readonly kind: "pcm"; readonly rate: number };
  /** AudioSocket's DTMF frame (0x03) only comes from Asterisk: the agent's keys go as tones in the audio. */
  readonly dtmfOut = { kind: "tones" } as const;
  readonly #conn: AudioSocketSink;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #pacer: Pacer;
  readonly #kind: number;
  readonly #samplesPerMs: number;
  readonly #frameSamples: number;
  readonly #frameBytes: number;
  readonly #maxBackloggedBytes: number;
  readonly #closeGraceMs: number;
  readonly #events = new HeldEvents("AudioSocketCallTransport");
  #ended = false;
  #closing = "";
  #closeTimer: TimerHandle | undefined;
  #hungUp: (() => void) | undefined;

  // Inbound, reused per call.
  readonly #inFrame: Int16Array;
  #inFill = 0;
  /** The low byte of a sample split across two payloads, or -1. */
  #carry = -1;
  #inFrames = 0;

  // Outbound: frames of one pacer wake-up gathered here and written in one go.
  #out: Uint8Array;
  #outFill = 0;
  #queuedMs = 0;
  #sentSamples = 0;
  #clears = 0;
  #backlogDrops = 0;

  constructor(opts: AudioSocketCallOptions) {
    this.info = { callId: opts.callId, transport: "audiosocket", params: { uuid: opts.callId } };
    this.inputRate = opts.rate;
    this.output = { kind: "pcm", rate: opts.rate };
    this.#kind = audioKind(opts.rate);
    this.#conn = opts.connection;
    this.#log = opts.log;
    this.#clock = opts.clock;
    this.#samplesPerMs = opts.rate / 1000;
    this.#frameSamples = (opts.rate * FRAME_MS) / 1000;
    this.#frameBytes = HEADER_BYTES + this.#frameSamples * 2;
    this.#maxBackloggedBytes = ((opts.maxBackloggedMs ?? 1000) / FRAME_MS) * this.#frameBytes;
    this.#closeGraceMs = opts.closeGraceMs ?? 2000;
    this.#inFrame = new Int16Array(this.#frameSamples);
    this.#pacer = new Pacer({
      clock: opts.clock,
      frameSamples: this.#frameSamples,
      leadMs: opts.leadMs ?? 60,
      send: (frame, samples) => this.#sendFrame(frame, samples),
      flush: () => this.#flushOut(),
    });
    this.#out = this.#newOut();
  }

  attach(listener: TransportListener): void {
    this.#events.attach(listener);
  }

  play(audio: AgentAudio): void {
    if (!(audio instanceof Int16Array))
      throw new TypeError(`an AudioSocket call plays PCM (its output is pcm at ${this.inputRate} Hz)`);
    if (this.#ended || this.#closing || audio.length === 0) return;
    this.#queuedMs += audio.length / this.#samplesPerMs;
    this.#pacer.push(audio);
  }

  clear(): void {
    if (this.#ended) return;
    const unsent = this.#pacer.clear();
    this.#clears++;
    const played = this.playedMs();
    this.#log.info(
      { droppedMs: Math.round(this.#queuedMs - played), unsentMs: unsent / this.#samplesPerMs },
      "clear: dropped unsent audio",
    );
    this.#queuedMs = played;
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    return this.#sentSamples / this.#samplesPerMs;
  }

  /** Sends the hang-up frame and closes; resolves once the socket has closed. */
  hangUp(reason: string): Promise<void> {
    if (this.#ended) return Promise.resolve();
    if (this.#closing) return new Promise((resolve) => this.#whenClosed(resolve));
    this.#log.info({ reason }, "hang-up: sending the hang-up frame");
    this.#closing = `hang-up (${reason})`;
    this.#pacer.close();
    this.#conn.write(HANGUP_FRAME);
    this.#conn.end();
    this.#closeTimer = this.#clock.setTimeout(() => {
      this.#log.warn({ graceMs: this.#closeGraceMs }, "Asterisk did not close after the hang-up frame");
      this.#conn.destroy();
    }, this.#closeGraceMs);
    return new Promise((resolve) => this.#whenClosed(resolve));
  }

  async transfer(target: string): Promise<void> {
    this.#log.warn({ target }, "transfer asked of an AudioSocket call: not possible");
    throw new Error(
      "transfer: AudioSocket carries audio only and cannot transfer a call; hang up and let the Asterisk dialplan route it (the steps after AudioSocket())",
    );
  }

  // ---- inbound, called by the connection ----

  /** Signed-linear little-endian bytes `bytes[start, end)` at the call's rate. */
  handleAudio(bytes: Uint8Array, start: number, end: number): void {
    if (this.#ended) return;
    let pos = start;
    const frame = this.#inFrame;
    const size = frame.length;
    if (this.#carry >= 0 && pos < end) {
      frame[this.#inFill++] = ((bytes[pos++]! << 24) >> 16) | this.#carry;
      this.#carry = -1;
      if (this.#inFill === size) this.#frameDone();
    }
    while (pos + 1 < end) {
      // Little-endian: low byte first; `<< 24 >> 16` sign-extends the high byte.
      frame[this.#inFill++] = ((bytes[pos + 1]! << 24) >> 16) | bytes[pos]!;
      pos += 2;
      if (this.#inFill === size) this.#frameDone();
    }
    if (pos < end) this.#carry = bytes[pos]!;
  }

  handleDtmf(digit: string): void {
    if (this.#ended) return;
    this.#log.info({ digit }, "dtmf");
    this.#deliver((l) => l.dtmf(digit));
  }

  /** The connection closed (or Asterisk sent a hang-up): the call is over for the session. */
  handleEnd(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pacer.close();
    this.#clock.clearTimeout(this.#closeTimer);
    const p = this.#pacer.stats;
    const why = this.#closing || reason;
    this.#log.info(
      {
        reason: why,
        inFrames: this.#inFrames,
        outFrames: p.sentFrames,
        queuedMs: Math.round(this.#queuedMs),
        playedMs: Math.round(this.playedMs()),
        clears: this.#clears,
        backlogDrops: this.#backlogDrops,
        pacerCatchUps: p.catchUps,
        pacerMaxLateMs: Math.round(p.maxLateMs),
      },
      "call ended",
    );
    this.#deliver((l) => l.ended(why));
    this.#hungUp?.();
    this.#hungUp = undefined;
  }

  get ended(): boolean {
    return this.#ended;
  }

  // ---- internals ----

  #whenClosed(resolve: () => void): void {
    const prev = this.#hungUp;
    this.#hungUp = () => {
      prev?.();
      resolve();
    };
  }

  #frameDone(): void {
    this.#inFill = 0;
    this.#inFrames++;
    this.#events.audio(this.#inFrame);
  }

  #deliver(event: (l: TransportListener) => void): void {
    this.#events.deliver(event);
  }

  #newOut(): Uint8Array {
    // Room for one lead's worth of frames: what a pacer wake-up (or a catch-up) sends at once.
    const frames = Math.ceil(this.#pacer.leadMs / FRAME_MS) + 1;
    return new Uint8Array(frames * this.#frameBytes);
  }

  #sendFrame(frame: Int16Array, samples: number): void {
    if (this.#conn.writableLength > this.#maxBackloggedBytes) {
      // Asterisk is not reading: drop rather than let the backlog grow without bound.
      if (this.#backlogDrops++ === 0)
        this.#log.warn(
          { backloggedBytes: this.#conn.writableLength },
          "Asterisk is not reading; dropping audio",
        );
      this.#sentSamples += samples;
      return;
    }
    if (this.#outFill + this.#frameBytes > this.#out.length) this.#flushOut();
    const out = this.#out;
    let at = this.#outFill;
    writeHeader(out, at, this.#kind, frame.length * 2);
    at += HEADER_BYTES;
    for (let i = 0; i < frame.length; i++) {
      const s = frame[i]!;
      out[at++] = s & 0xff;
      out[at++] = (s >> 8) & 0xff;
    }
    this.#outFill = at;
    this.#sentSamples += samples;
  }

  /** End of a pacer wake-up: what it sent leaves in one write, and the session hears how far playout got. */
  #flushOut(): void {
    if (this.#outFill > 0) {
      const before = this.#conn.writableLength;
      this.#conn.write(this.#out.subarray(0, this.#outFill));
      this.#outFill = 0;
      // The socket keeps a buffer it could not write at once: the next frames need another.
      if (this.#conn.writableLength > before) this.#out = this.#newOut();
    }
    const played = this.playedMs();
    this.#deliver((l) => l.played(played));
  }
}
