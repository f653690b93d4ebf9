// One TCP connection from Asterisk, from accept to close. It reads the UUID, waits for the
// first audio frame (its kind fixes the call's sample rate, which the session needs before it
// starts), then hands the call to the session and feeds it. Whatever a peer sends that is not
// AudioSocket — garbage, unknown kinds, absurd lengths, no UUID, audio faster than real time —
// is dropped and counted, and a connection that keeps doing it is closed.
import type { Socket } from "node:net";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { AudioSocketCallTransport } from "./call-transport.ts";
import {
  audioRate,
  FrameParser,
  formatUuid,
  KIND_DTMF,
  KIND_ERROR,
  KIND_HANGUP,
  KIND_UUID,
  kindName,
  type SkipReason,
} from "./framing.ts";
import type { AudioSocketStats } from "./stats.ts";

export interface ConnectionLimits {
  /** Connect → UUID, ms. */
  handshakeTimeoutMs: number;
  /** UUID → first audio frame, ms; past it the call starts at 8 kHz, the AudioSocket() app's format. */
  audioWaitMs: number;
  /** No bytes at all from Asterisk for this long ends the call, ms. */
  idleTimeoutMs: number;
  /** Audio accepted ahead of real time, ms; more is dropped (a flood). */
  maxAheadMs: number;
  /** Bad frames tolerated on one connection before it is closed as garbage. */
  maxBadFrames: number;
}

export interface ConnectionOptions {
  socket: Socket;
  log: Logger;
  clock: Clock;
  limits: ConnectionLimits;
  stats: AudioSocketStats;
  /** Transport options beyond the connection's own (lead, backlog...). */
  leadMs?: number;
  onCall(transport: AudioSocketCallTransport): void;
  onClose(): void;
}

/** The dialplan app always speaks slin at 8 kHz. */
const APP_RATE = 8000;
/** DTMF digits held while the call waits for its first audio frame. */
const HELD_DTMF_LIMIT = 16;
const DTMF_DIGIT = /^[0-9*#A-D]$/;

type Phase = "uuid" | "rate" | "call" | "closed";

export class AsteriskConnection {
  readonly #socket: Socket;
  readonly #clock: Clock;
  readonly #limits: ConnectionLimits;
  readonly #stats: AudioSocketStats;
  readonly #opts: ConnectionOptions;
  readonly #parser: FrameParser;
  #log: Logger;
  #phase: Phase = "uuid";
  #callId = "";
  #transport: AudioSocketCallTransport | undefined;
  #rate = 0;
  #heldDtmf: string[] = [];
  #phaseTimer: TimerHandle | undefined;
  #idleTimer: TimerHandle | undefined;
  #lastDataAt: number;
  #badFrames = 0;
  #endReason = "";
  // Flood control: audio received against time since the first audio frame.
  #audioStartAt = -1;
  #audioMs = 0;
  #floodDrops = 0;
  #mismatchDrops = 0;
  readonly #onIdleCheck = () => this.#idleCheck();

  constructor(opts: ConnectionOptions) {
    this.#opts = opts;
    this.#socket = opts.socket;
    this.#clock = opts.clock;
    this.#limits = opts.limits;
    this.#stats = opts.stats;
    this.#log = opts.log;
    this.#lastDataAt = opts.clock.now();
    this.#parser = new FrameParser({
      frame: (kind, bytes, start, end) => this.#frame(kind, bytes, start, end),
      skipped: (kind, length, reason) => this.#skipped(kind, length, reason),
    });
    this.#socket.setNoDelay(true);
    this.#socket.on("data", (chunk: Buffer) => {
      this.#lastDataAt = this.#clock.now();
      this.#parser.push(chunk);
    });
    this.#socket.on("error", (err) => this.#log.debug({ err }, "socket error"));
    this.#socket.on("close", () => this.#closed());
    this.#phaseTimer = this.#clock.setTimeout(
      () => this.#handshakeTimeout(),
      this.#limits.handshakeTimeoutMs,
    );
    this.#idleTimer = this.#clock.setTimeout(this.#onIdleCheck, this.#limits.idleTimeoutMs);
  }

  /** Ends the connection from our side (server shutdown). */
  close(reason: string): void {
    if (this.#phase === "closed") return;
    this.#endReason ||= reason;
    this.#socket.destroy();
  }

  #frame(kind: number, bytes: Uint8Array, start: number, end: number): void {
    if (this.#phase === "uuid") {
      if (kind !== KIND_UUID) {
        this.#garbage(`first frame is ${kindName(kind)}, not the UUID`);
        return;
      }
      this.#callId = formatUuid(bytes, start);
      this.#log = this.#log.child({ callId: this.#callId });
      this.#log.info("AudioSocket connection: UUID received, waiting for the first audio frame");
      this.#phase = "rate";
      this.#clock.clearTimeout(this.#phaseTimer);
      this.#phaseTimer = this.#clock.setTimeout(() => this.#audioWaitOver(), this.#limits.audioWaitMs);
      return;
    }
    const rate = audioRate(kind);
    if (rate !== undefined) {
      if (this.#phase === "rate") this.#startCall(rate, "first audio frame");
      this.#audio(rate, bytes, start, end);
      return;
    }
    switch (kind) {
      case KIND_DTMF:
        this.#dtmf(String.fromCharCode(bytes[start]!));
        return;
      case KIND_HANGUP:
        this.#log.info("Asterisk sent a hang-up frame");
        this.#endReason ||= "hang-up from Asterisk";
        this.#parser.stop();
        this.#socket.end();
        return;
      case KIND_ERROR: {
        this.#stats.errorFrames++;
        const code = end > start ? bytes[start]! : undefined;
        this.#log.warn({ code, meaning: errorMeaning(code) }, "Asterisk reported an error");
        return;
      }
      case KIND_UUID:
        this.#bad("a second UUID frame");
        return;
    }
  }

  #skipped(kind: number, length: number, reason: SkipReason): void {
    if (this.#phase === "uuid") {
      this.#garbage(`first frame is ${kindName(kind)} (${reason}, ${length} bytes)`);
      return;
    }
    this.#bad(`${kindName(kind)} frame skipped: ${reason}, ${length} bytes`);
  }

  #audio(rate: number, bytes: Uint8Array, start: number, end: number): void {
    const t = this.#transport;
    if (!t) return;
    if (rate !== this.#rate) {
      this.#stats.rateMismatchFrames++;
      if (this.#mismatchDrops++ === 0)
        this.#log.warn(
          { callRate: this.#rate, frameRate: rate },
          "audio at another rate than the call's: dropped",
        );
      return;
    }
    const now = this.#clock.now();
    if (this.#audioStartAt < 0) this.#audioStartAt = now;
    const ms = (end - start) / 2 / (rate / 1000);
    if (this.#audioMs + ms > now - this.#audioStartAt + this.#limits.maxAheadMs) {
      this.#stats.floodDroppedFrames++;
      if (this.#floodDrops++ === 0)
        this.#log.warn(
          { maxAheadMs: this.#limits.maxAheadMs },
          "audio arrives faster than real time: dropping",
        );
      return;
    }
    this.#audioMs += ms;
    t.handleAudio(bytes, start, end);
  }

  #dtmf(digit: string): void {
    const d = digit.toUpperCase();
    if (!DTMF_DIGIT.test(d)) {
      this.#bad(`DTMF frame with ${JSON.stringify(digit)}, not a digit`);
      return;
    }
    this.#stats.dtmf++;
    if (this.#transport) this.#transport.handleDtmf(d);
    else if (this.#heldDtmf.length < HELD_DTMF_LIMIT) this.#heldDtmf.push(d);
  }

  #startCall(rate: number, why: string): void {
    this.#clock.clearTimeout(this.#phaseTimer);
    this.#phaseTimer = undefined;
    this.#phase = "call";
    this.#rate = rate;
    const transport = new AudioSocketCallTransport({
      connection: this.#socket,
      callId: this.#callId,
      rate,
      log: this.#log,
      clock: this.#clock,
      ...(this.#opts.leadMs !== undefined ? { leadMs: this.#opts.leadMs } : {}),
    });
    this.#transport = transport;
    this.#stats.calls++;
    this.#log.info({ rate, why }, "AudioSocket call starts");
    try {
      this.#opts.onCall(transport);
    } catch (err) {
      this.#log.error({ err }, "onCall threw; closing the connection");
      this.close("onCall failed");
      return;
    }
    for (const d of this.#heldDtmf) transport.handleDtmf(d);
    this.#heldDtmf = [];
  }

  #handshakeTimeout(): void {
    this.#phaseTimer = undefined;
    if (this.#phase !== "uuid") return;
    this.#stats.handshakeTimeouts++;
    this.#log.warn({ timeoutMs: this.#limits.handshakeTimeoutMs }, "no UUID frame in time: closing");
    this.close("no UUID");
  }

  #audioWaitOver(): void {
    this.#phaseTimer = undefined;
    if (this.#phase !== "rate") return;
    this.#startCall(
      APP_RATE,
      `no audio within ${this.#limits.audioWaitMs} ms: the AudioSocket() app's 8 kHz`,
    );
  }

  #idleCheck(): void {
    this.#idleTimer = undefined;
    if (this.#phase === "closed") return;
    const idle = this.#clock.now() - this.#lastDataAt;
    if (idle >= this.#limits.idleTimeoutMs) {
      this.#stats.idleTimeouts++;
      this.#log.warn({ idleMs: Math.round(idle) }, "nothing from Asterisk for too long: closing");
      this.close("idle timeout");
      return;
    }
    this.#idleTimer = this.#clock.setTimeout(this.#onIdleCheck, this.#limits.idleTimeoutMs - idle);
  }

  #bad(what: string): void {
    this.#stats.badFrames++;
    this.#badFrames++;
    if (this.#badFrames === 1) this.#log.warn({ what }, "bad frame dropped");
    if (this.#badFrames > this.#limits.maxBadFrames)
      this.#garbage(`more than ${this.#limits.maxBadFrames} bad frames`);
  }

  #garbage(why: string): void {
    this.#stats.garbageClosed++;
    this.#log.warn({ why }, "not AudioSocket: closing the connection");
    this.#parser.stop();
    this.close(`garbage: ${why}`);
  }

  #closed(): void {
    if (this.#phase === "closed") return;
    const wasCall = this.#phase === "call";
    this.#phase = "closed";
    this.#clock.clearTimeout(this.#phaseTimer);
    this.#clock.clearTimeout(this.#idleTimer);
    if (!this.#parser.atBoundary && !this.#endReason) this.#stats.truncatedFrames++;
    const reason = this.#endReason || "socket closed";
    if (wasCall) this.#transport!.handleEnd(reason);
    else
      this.#log.info(
        { reason, callId: this.#callId || undefined },
        "connection closed before a call started",
      );
    this.#opts.onClose();
  }
}

/** Asterisk's error codes are bit flags (CyCoreSystems/audiosocket README). */
function errorMeaning(code: number | undefined): string {
  if (code === undefined) return "no code";
  const parts: string[] = [];
  if (code & 0x01) parts.push("calling party hung up");
  if (code & 0x02) parts.push("frame forwarding error");
  if (code & 0x04) parts.push("memory allocation error");
  return parts.length > 0 ? parts.join(", ") : "application-specific";
}
