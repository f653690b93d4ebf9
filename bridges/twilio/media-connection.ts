// One accepted media stream WebSocket: waits for Twilio's `start`, then hands the call to
// the session as a transport and routes the stream's messages to it.
import type { Buffer } from "node:buffer";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport } from "../transport.ts";
import type { ServerWebSocket } from "../websocket-server.ts";
import type { CallControl } from "./call-control.ts";
import { type MediaSocket, TwilioCallTransport } from "./call-transport.ts";
import {
  MEDIA_FORMAT,
  mediaSpan,
  parseTwilioMessage,
  type StartMessage,
  scanTwilioMedia,
} from "./protocol.ts";

export interface MediaConnectionOptions {
  ws: ServerWebSocket;
  log: Logger;
  clock: Clock;
  control: CallControl | undefined;
  leadMs?: number | undefined;
  markEveryMs?: number | undefined;
  /** Closes a socket on which no `start` arrives within this time (default 10 s). */
  startTimeoutMs?: number | undefined;
  onCall(transport: CallTransport): void;
}

/**
 * The WebSocket as the transport writes to it. cork/uncork reach the TCP socket: the frames and
 * mark of one pacer wake-up then leave in one write, not three. writeFrames writes the transport's
 * ready-made frames to that socket too; send() writes each message to it synchronously, so the two
 * kinds of writes stay in order.
 */
function mediaSocket(ws: ServerWebSocket): MediaSocket {
  const tcp = ws.socket;
  return {
    send: (data) => ws.send(data),
    close: (code, reason) => ws.close(code, reason),
    cork: () => tcp.cork(),
    uncork: () => tcp.uncork(),
    writeFrames: (frames: Buffer) => {
      if (ws.readyState !== ws.OPEN) return true; // closing: dropped, as send() would
      tcp.write(frames);
      // Written through to the kernel at once, or still held (then the caller lets it go).
      return tcp.writableLength === 0;
    },
  };
}

export function serveMediaConnection(opts: MediaConnectionOptions): void {
  const { ws, clock } = opts;
  let log = opts.log;
  let call: TwilioCallTransport | undefined;
  let badFrames = 0;
  const startTimer = clock.setTimeout(() => {
    if (call) return;
    log.warn("no start message on the media stream: closing it");
    ws.close(1008, "no start");
  }, opts.startTimeoutMs ?? 10_000);

  const start = (msg: StartMessage) => {
    clock.clearTimeout(startTimer);
    const s = msg.start;
    log = opts.log.child({ callSid: s.callSid, streamSid: s.streamSid });
    const fmt = s.mediaFormat;
    const formatOk =
      fmt.encoding === MEDIA_FORMAT.encoding &&
      Number(fmt.sampleRate) === MEDIA_FORMAT.sampleRate &&
      Number(fmt.channels) === MEDIA_FORMAT.channels;
    log.info(
      { from: s.customParameters.From, to: s.customParameters.To, tracks: s.tracks, mediaFormat: fmt },
      "media stream started",
    );
    if (!formatOk) {
      log.error({ mediaFormat: fmt }, "media stream format is not µ-law 8 kHz mono: closing it");
      ws.close(1003, "unsupported media format");
      return;
    }
    call = new TwilioCallTransport({
      socket: mediaSocket(ws),
      start: msg,
      log,
      clock,
      control: opts.control,
      ...(opts.leadMs !== undefined ? { leadMs: opts.leadMs } : {}),
      ...(opts.markEveryMs !== undefined ? { markEveryMs: opts.markEveryMs } : {}),
    });
    try {
      opts.onCall(call);
    } catch (err) {
      log.error({ err }, "the session refused the call: closing the media stream");
      ws.close(1011, "session error");
    }
  };

  const span = mediaSpan();
  ws.on("message", (data, isBinary) => {
    if (isBinary) {
      if (badFrames++ === 0) log.warn("binary frame on the media stream ignored (Twilio sends JSON text)");
      return;
    }
    // Media, nearly every message: read from the bytes, decoded into the call's buffer, no string.
    if (call && scanTwilioMedia(data, span) && call.handleMediaBytes(data, span)) return;
    const parsed = parseTwilioMessage(data.toString());
    if (!parsed.ok) {
      if (badFrames++ < 5) log.warn({ problem: parsed.reason }, "malformed media stream message ignored");
      return;
    }
    const msg = parsed.message;
    switch (msg.event) {
      case "media":
        call?.handleMedia(msg.media);
        return;
      case "mark":
        call?.handleMark(msg.mark.name);
        return;
      case "dtmf":
        call?.handleDtmf(msg.dtmf.digit);
        return;
      case "connected":
        log.debug({ protocol: msg.protocol, version: msg.version }, "media stream connected");
        return;
      case "start":
        if (call) log.warn("second start message on one media stream ignored");
        else start(msg);
        return;
      case "stop":
        log.info("media stream stopped by Twilio");
        call?.handleEnd("stop");
        ws.close(1000, "stop");
        return;
    }
  });

  ws.on("error", (err) => log.warn({ err }, "media stream socket error"));
  ws.on("close", (code, reason) => {
    clock.clearTimeout(startTimer);
    if (call) call.handleEnd(`media stream closed (${code}${reason.length ? ` ${reason.toString()}` : ""})`);
    else log.info({ code }, "media stream closed before it started");
  });
}
