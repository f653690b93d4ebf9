// One browser call as the session sees it (the transport port), over the page's WebSocket.
// Inbound: the microphone's 16 kHz PCM → 20 ms frames. Outbound: play() → pacer → PCM a little
// ahead of the page's playout (the page plays what it gets, back to back). What the caller has
// heard is what the page reports it played, counted per clear epoch (see protocol.ts), never
// more than was sent.
import { Framer } from "../../codecs/pcm.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { HeldEvents } from "../held-events.ts";
import { Pacer } from "../pacer.ts";
import type { AgentAudio, CallInfo, CallTransport, TransportListener } from "../transport.ts";
import {
  BROWSER_FRAME_MS,
  BROWSER_RATE,
  type BrowserClientMessage,
  type BrowserServerMessage,
} from "./protocol.ts";

const SAMPLES_PER_MS = BROWSER_RATE / 1000;
const FRAME_SAMPLES = BROWSER_RATE * (BROWSER_FRAME_MS / 1000);

/** The part of a WebSocket the transport writes to. */
export interface BrowserSocket {
  send(data: string | Uint8Array): void;
  close(code: number, reason: string): void;
}

export interface BrowserCallOptions {
  socket: BrowserSocket;
  callId: string;
  /** Who is calling, as the call's record shows it (e.g. "browser 127.0.0.1"). */
  from: string;
  /** The agent the person chose on the console (the call's `to`, which routes it). */
  to?: string | undefined;
  params: Record<string, string>;
  /** Logger for this call (already carrying callId). */
  log: Logger;
  clock: Clock;
  /** Most agent audio sent ahead of the page's playout, ms (default 200). */
  leadMs?: number;
}

export class BrowserCallTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate = BROWSER_RATE;
  readonly output = { kind: "pcm", rate: BROWSER_RATE } as const;
  readonly #socket: BrowserSocket;
  readonly #log: Logger;
  readonly #pacer: Pacer;
  readonly #events = new HeldEvents("BrowserCallTransport");
  readonly #framer = new Framer(FRAME_SAMPLES);
  #ended = false;
  #closing = "";
  #hungUp: (() => void) | undefined;

  // Outbound: the frames of one pacer wake-up leave as one message.
  readonly #out: Int16Array;
  #outFill = 0;
  #queuedMs = 0;
  /** Heard before the current epoch began, ms. */
  #epochBaseMs = 0;
  /** Played in the current epoch, as the page last reported it, ms. */
  #epochPlayedMs = 0;
  #epoch = 0;
  #inFrames = 0;
  #sentMs = 0;

  constructor(opts: BrowserCallOptions) {
    this.info = {
      callId: opts.callId,
      transport: "browser",
      from: opts.from,
      ...(opts.to ? { to: opts.to } : {}),
      params: opts.params,
    };
    this.#socket = opts.socket;
    this.#log = opts.log;
    const leadMs = opts.leadMs ?? 200;
    // Room for a whole lead: what one wake-up (or a catch-up) sends at once.
    this.#out = new Int16Array((Math.ceil(leadMs / BROWSER_FRAME_MS) + 1) * FRAME_SAMPLES);
    this.#pacer = new Pacer({
      clock: opts.clock,
      frameSamples: FRAME_SAMPLES,
      leadMs,
      // Five frames per wake-up: ten messages a second instead of fifty, at the same lead.
      batchFrames: 5,
      send: (frame, samples) => this.#gather(frame, samples),
      flush: () => this.#flushOut(),
    });
  }

  attach(listener: TransportListener): void {
    this.#events.attach(listener);
  }

  /** Tells the page the call is set up. */
  ready(): void {
    this.#send({
      type: "ready",
      callId: this.info.callId,
      sampleRate: BROWSER_RATE,
      frameMs: BROWSER_FRAME_MS,
    });
  }

  play(audio: AgentAudio): void {
    if (!(audio instanceof Int16Array))
      throw new TypeError(`a browser call plays PCM (its output is pcm at ${BROWSER_RATE} Hz)`);
    if (this.#ended || this.#closing || audio.length === 0) return;
    this.#queuedMs += audio.length / SAMPLES_PER_MS;
    this.#pacer.push(audio);
  }

  clear(): void {
    if (this.#ended) return;
    const unsent = this.#pacer.clear();
    this.#outFill = 0;
    const played = this.playedMs();
    const dropped = this.#queuedMs - played;
    this.#epoch++;
    this.#epochBaseMs = played;
    this.#epochPlayedMs = 0;
    this.#queuedMs = played;
    this.#send({ type: "clear", epoch: this.#epoch });
    this.#log.info(
      { droppedMs: Math.round(dropped), unsentMs: unsent / SAMPLES_PER_MS, epoch: this.#epoch },
      "clear: the page drops its queued audio",
    );
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    return Math.min(this.#queuedMs, this.#epochBaseMs + this.#epochPlayedMs);
  }

  /** Tells the page the agent hung up and closes; resolves once the socket has closed. */
  hangUp(reason: string): Promise<void> {
    if (this.#ended) return Promise.resolve();
    if (!this.#closing) {
      this.#log.info({ reason }, "hang-up: closing the browser call");
      this.#closing = `hang-up (${reason})`;
      this.#pacer.close();
      this.#send({ type: "hangup", reason });
      this.#socket.close(1000, "hang-up");
    }
    return new Promise((resolve) => {
      const prev = this.#hungUp;
      this.#hungUp = () => {
        prev?.();
        resolve();
      };
    });
  }

  async transfer(target: string): Promise<void> {
    this.#log.warn({ target }, "transfer asked of a browser call: not possible");
    throw new Error("transfer: a browser call has no phone line to transfer; it can only be hung up");
  }

  // ---- inbound, called by the connection ----

  /** Microphone audio: little-endian 16-bit samples (a whole number of them). */
  handleAudio(pcm: Int16Array): void {
    if (this.#ended) return;
    for (const frame of this.#framer.push(pcm)) {
      this.#inFrames++;
      this.#events.audio(frame);
    }
  }

  handleMessage(m: BrowserClientMessage): void {
    if (this.#ended) return;
    switch (m.type) {
      case "played": {
        // Reports of an epoch a clear has closed count audio that was dropped: not heard.
        if (m.epoch !== this.#epoch || m.ms <= this.#epochPlayedMs) return;
        this.#epochPlayedMs = m.ms;
        const played = this.playedMs();
        this.#events.deliver((l) => l.played(played));
        return;
      }
      case "dtmf": {
        this.#log.info({ digit: m.digit }, "dtmf");
        const { digit } = m;
        this.#events.deliver((l) => l.dtmf(digit));
        return;
      }
      case "hangup":
        this.#log.info("the caller hung up in the browser");
        this.#closing ||= "caller hung up";
        this.#socket.close(1000, "caller hung up");
        return;
    }
  }

  /** The socket closed: the call is over for the session. */
  handleEnd(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pacer.close();
    const why = this.#closing || reason;
    this.#log.info(
      {
        reason: why,
        inFrames: this.#inFrames,
        sentMs: Math.round(this.#sentMs),
        queuedMs: Math.round(this.#queuedMs),
        playedMs: Math.round(this.playedMs()),
        clears: this.#epoch,
        pacerCatchUps: this.#pacer.stats.catchUps,
      },
      "browser call ended",
    );
    this.#events.deliver((l) => l.ended(why));
    this.#hungUp?.();
    this.#hungUp = undefined;
  }

  // ---- internals ----

  #send(m: BrowserServerMessage): void {
    this.#socket.send(JSON.stringify(m));
  }

  #gather(frame: Int16Array, samples: number): void {
    if (this.#outFill + samples > this.#out.length) this.#flushOut();
    // Only the real samples: a padded last frame would be counted as played by the page.
    this.#out.set(frame.subarray(0, samples), this.#outFill);
    this.#outFill += samples;
  }

  #flushOut(): void {
    if (this.#outFill === 0) return;
    // A copy: ws may hold on to what it sends until the kernel takes it, and #out is reused.
    const pcm = this.#out.slice(0, this.#outFill);
    this.#sentMs += this.#outFill / SAMPLES_PER_MS;
    this.#outFill = 0;
    this.#socket.send(new Uint8Array(pcm.buffer));
  }
}
