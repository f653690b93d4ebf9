// One Twilio call as the session sees it (the transport port), over its media stream.
// Inbound: base64 µ-law media → 20 ms Int16 frames at 8 kHz, decoded into reused buffers.
// Outbound: play() → pacer → 20 ms µ-law media frames, with a mark every few frames and at
// the end of each stretch of audio, so the mark echoes tell how much the caller has heard.
import { Buffer } from "node:buffer";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { Framer } from "../../codecs/pcm.ts";
import { base64DecodedLength, decodeBase64Into } from "../../src/core/base64.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { HeldEvents } from "../held-events.ts";
import { Pacer } from "../pacer.ts";
import type { AgentAudio, CallInfo, CallTransport, TransportListener } from "../transport.ts";
import type { CallControl } from "./call-control.ts";
import { MarkLedger } from "./marks.ts";
import { OutboundFrames } from "./outbound-frames.ts";
import { AppMessageWriter, type MediaFields, type MediaSpan, type StartMessage } from "./protocol.ts";
import { dialTwiml, hangupTwiml, parseTransferTarget } from "./twiml.ts";

export const TWILIO_RATE = 8000;
const FRAME_SAMPLES = 160;
const SAMPLES_PER_MS = TWILIO_RATE / 1000;

/** The part of a WebSocket the transport writes to. */
export interface MediaSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** Hold writes until uncork(), to send several messages in one socket write (optional). */
  cork?(): void;
  uncork?(): void;
  /**
   * Writes bytes that are whole WebSocket frames (OutboundFrames) straight to the connection, in
   * order with send(); returns whether the socket was done with them on return, so that the
   * buffer may be reused (optional: without it, messages go through send()).
   */
  writeFrames?(frames: Buffer): boolean;
}

export interface TwilioCallOptions {
  socket: MediaSocket;
  start: StartMessage;
  /** Logger for this call (already carrying callSid and streamSid). */
  log: Logger;
  clock: Clock;
  /** REST call control, or undefined when no account credentials are configured. */
  control: CallControl | undefined;
  /** Most outbound audio queued at Twilio, ms (default 200). */
  leadMs?: number;
  /** Outbound audio between marks, ms (default 100; rounded to whole frames). */
  markEveryMs?: number;
}

export class TwilioCallTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate = TWILIO_RATE;
  readonly output = { kind: "pcm", rate: TWILIO_RATE } as const;
  /** Media Streams has no message that sends a digit: the agent's keys go as tones in the audio. */
  readonly dtmfOut = { kind: "tones" } as const;
  readonly streamSid: string;
  readonly #socket: MediaSocket;
  readonly #log: Logger;
  readonly #clock: Clock;
  readonly #control: CallControl | undefined;
  readonly #writer: AppMessageWriter;
  readonly #pacer: Pacer;
  readonly #marks = new MarkLedger();
  readonly #markEveryFrames: number;
  readonly #events = new HeldEvents("TwilioCallTransport");
  /** Events that came before the session attached, delivered on attach (audio bounded). */
  #ended = false;
  #closing = "";

  // Inbound, reused per call.
  #inBytes = Buffer.alloc(1024);
  #inFrameBytes = this.#inBytes.subarray(0, FRAME_SAMPLES);
  /** A message of exactly one frame (Twilio's 20 ms) is decoded here and goes to the session as it is. */
  readonly #inFrame = new Int16Array(FRAME_SAMPLES);
  #inScratch = new Int16Array(1024);
  readonly #framer = new Framer(FRAME_SAMPLES);
  readonly #onFrame = (frame: Int16Array) => this.#deliverFrame(frame);
  #nextTimestamp = -1;
  #inFrames = 0;
  #inGaps = 0;

  // Outbound, reused per call.
  readonly #outBytes = new Uint8Array(FRAME_SAMPLES);
  readonly #outB64 = Buffer.from(this.#outBytes.buffer, this.#outBytes.byteOffset, FRAME_SAMPLES);
  #framesSinceMark = 0;
  #samplesSinceMark = 0;
  #queuedMs = 0;
  #clears = 0;
  #corked = false;
  /** Outbound messages as finished frames, when the socket takes them (one write per wake-up). */
  readonly #frames: OutboundFrames | undefined;

  constructor(opts: TwilioCallOptions) {
    const s = opts.start.start;
    this.streamSid = s.streamSid;
    const params = s.customParameters;
    this.info = {
      callId: s.callSid,
      transport: "twilio",
      ...(params.From ? { from: params.From } : {}),
      ...(params.To ? { to: params.To } : {}),
      params: { ...params, streamSid: s.streamSid, accountSid: s.accountSid },
    };
    this.#socket = opts.socket;
    this.#log = opts.log;
    this.#clock = opts.clock;
    this.#control = opts.control;
    this.#writer = new AppMessageWriter(s.streamSid);
    this.#markEveryFrames = Math.max(1, Math.round((opts.markEveryMs ?? 100) / 20));
    this.#pacer = new Pacer({
      clock: opts.clock,
      frameSamples: FRAME_SAMPLES,
      leadMs: opts.leadMs ?? 200,
      send: (frame, samples, drained) => this.#sendFrame(frame, samples, drained),
      flush: () => this.#flushOut(),
    });
    this.#frames = opts.socket.writeFrames ? new OutboundFrames(s.streamSid) : undefined;
  }

  attach(listener: TransportListener): void {
    this.#events.attach(listener);
  }

  play(audio: AgentAudio): void {
    if (!(audio instanceof Int16Array))
      throw new TypeError("a Twilio call plays PCM (its output is pcm at 8 kHz)");
    const pcm = audio;
    if (this.#ended || pcm.length === 0) return;
    this.#queuedMs += pcm.length / SAMPLES_PER_MS;
    this.#pacer.push(pcm);
  }

  clear(): void {
    if (this.#ended) return;
    const unsent = this.#pacer.clear();
    const written = this.#marks.clear();
    this.#framesSinceMark = 0;
    this.#samplesSinceMark = 0;
    this.#socket.send(this.#writer.clear());
    this.#clears++;
    const dropped = this.#queuedMs - this.#marks.playedMs;
    this.#queuedMs = this.#marks.playedMs;
    this.#log.info(
      { droppedMs: Math.round(dropped), unsentMs: unsent / SAMPLES_PER_MS, pendingMarks: written },
      "clear: dropped unheard audio",
    );
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    return this.#marks.playedMs;
  }

  async hangUp(reason: string): Promise<void> {
    if (this.#ended) return;
    if (!this.#control) {
      this.#log.info(
        { reason },
        "hang-up: no Twilio account credentials (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN), so the REST hang-up is skipped; closing the media stream instead (with nothing after <Connect> in the TwiML, Twilio then ends the call)",
      );
      this.#close(`hang-up (${reason})`);
      return;
    }
    this.#log.info({ reason }, "hang-up through the REST API");
    this.#closing = `hang-up (${reason})`;
    try {
      await this.#control.updateTwiml(this.info.callId, hangupTwiml());
    } catch (err) {
      this.#log.error({ err, reason }, "hang-up through the REST API failed; closing the media stream");
      this.#close(`hang-up (${reason})`);
    }
  }

  async transfer(target: string): Promise<void> {
    const parsed = parseTransferTarget(target);
    if (!parsed)
      throw new Error(`transfer: ${JSON.stringify(target)} is neither a phone number nor a SIP URI`);
    if (this.#ended) throw new Error("transfer: the call has ended");
    if (!this.#control) {
      this.#log.warn(
        { target },
        "transfer skipped: it needs Twilio account credentials (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)",
      );
      throw new Error("transfer needs Twilio account credentials (TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN)");
    }
    this.#log.info({ target }, "transfer through the REST API");
    await this.#control.updateTwiml(this.info.callId, dialTwiml(parsed));
  }

  // ---- inbound, called by the media stream connection ----

  handleMedia(m: MediaFields): void {
    if (this.#ended) return;
    if (m.track && m.track !== "inbound") return;
    const payload = m.payload;
    this.#reserveIn((payload.length * 3) >> 2);
    this.#inbound(Number(m.timestamp), this.#inBytes.write(payload, 0, "base64"));
  }

  /**
   * The same from the message's bytes (scanTwilioMedia): the payload is decoded from them straight
   * into the call's buffer, no string made. Returns false, having done nothing, when the payload is
   * not plain Base64; the message then goes through handleMedia().
   */
  handleMediaBytes(msg: Uint8Array, span: MediaSpan): boolean {
    if (this.#ended || span.otherTrack) return true;
    this.#reserveIn(base64DecodedLength(msg, span.payloadStart, span.payloadEnd));
    const n = decodeBase64Into(msg, span.payloadStart, span.payloadEnd, this.#inBytes);
    if (n < 0) return false;
    this.#inbound(span.timestampMs, n);
    return true;
  }

  #reserveIn(bytes: number): void {
    if (bytes <= this.#inBytes.length) return;
    this.#inBytes = Buffer.alloc(bytes * 2);
    this.#inFrameBytes = this.#inBytes.subarray(0, FRAME_SAMPLES);
  }

  /** `n` µ-law bytes of inbound audio stamped `ts` are in #inBytes: to 20 ms frames for the session. */
  #inbound(ts: number, n: number): void {
    if (this.#nextTimestamp >= 0 && ts - this.#nextTimestamp >= 20) this.#inGaps++;
    this.#nextTimestamp = ts + n / SAMPLES_PER_MS;
    if (n === FRAME_SAMPLES) {
      this.#framer.cut(mulawDecode(this.#inFrameBytes, this.#inFrame), this.#onFrame);
      return;
    }
    if (n > this.#inScratch.length) this.#inScratch = new Int16Array(n * 2);
    this.#framer.cut(mulawDecode(this.#inBytes.subarray(0, n), this.#inScratch), this.#onFrame);
  }

  handleDtmf(digit: string): void {
    if (this.#ended) return;
    this.#log.info({ digit }, "dtmf");
    this.#deliver((l) => l.dtmf(digit));
  }

  handleMark(name: string): void {
    const echo = this.#marks.echo(name, this.#clock.now());
    if (echo.kind === "played") {
      if (echo.lateMs > 1000)
        this.#log.warn(
          { mark: name, lateMs: Math.round(echo.lateMs) },
          "mark came back late: Twilio plays behind the pacer's model",
        );
      const played = this.#marks.playedMs;
      this.#deliver((l) => l.played(played));
    } else if (echo.kind === "unknown") {
      this.#log.warn({ mark: name }, "mark echo for a mark this call never sent");
    }
  }

  /** The stream stopped (Twilio `stop`) or its socket closed: the call is over for the session. */
  handleEnd(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pacer.close();
    const p = this.#pacer.stats;
    this.#log.info(
      {
        reason: this.#closing || reason,
        inFrames: this.#inFrames,
        inGaps: this.#inGaps,
        outFrames: p.sentFrames,
        queuedMs: Math.round(this.#queuedMs),
        playedMs: Math.round(this.#marks.playedMs),
        clears: this.#clears,
        marks: this.#marks.stats,
        pacerCatchUps: p.catchUps,
        pacerMaxLateMs: Math.round(p.maxLateMs),
      },
      "call ended",
    );
    const why = this.#closing || reason;
    this.#deliver((l) => l.ended(why));
  }

  get ended(): boolean {
    return this.#ended;
  }

  // ---- internals ----

  #deliverFrame(frame: Int16Array): void {
    this.#inFrames++;
    this.#events.audio(frame);
  }

  #deliver(event: (l: TransportListener) => void): void {
    this.#events.deliver(event);
  }

  #sendFrame(frame: Int16Array, samples: number, drained: boolean): void {
    const frames = this.#frames;
    if (!frames && !this.#corked && this.#socket.cork) {
      this.#socket.cork();
      this.#corked = true;
    }
    mulawEncode(frame, this.#outBytes);
    if (frames) frames.media(this.#outBytes);
    else this.#socket.send(this.#writer.media(this.#outB64.toString("base64")));
    this.#framesSinceMark++;
    this.#samplesSinceMark += samples;
    if (drained || this.#framesSinceMark >= this.#markEveryFrames) {
      const now = this.#clock.now();
      const name = this.#marks.add(this.#samplesSinceMark / SAMPLES_PER_MS, now, now + this.#pacer.aheadMs);
      if (frames) frames.mark(name);
      else this.#socket.send(this.#writer.mark(name));
      this.#framesSinceMark = 0;
      this.#samplesSinceMark = 0;
    }
  }

  /** End of a pacer wake-up: what it sent leaves in one write. */
  #flushOut(): void {
    const frames = this.#frames;
    if (frames && frames.pending > 0) frames.sent(this.#socket.writeFrames!(frames.take()));
    this.#uncork();
  }

  #uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#socket.uncork?.();
  }

  #close(why: string): void {
    this.#closing = why;
    this.#pacer.close();
    this.#socket.close(1000, "hang-up");
  }
}
