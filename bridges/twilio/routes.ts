// The Twilio face of the bridge on its HTTP server:
//   POST /twilio/voice   voice webhook → TwiML <Connect><Stream url="wss://…/twilio/media">
//   GET  /twilio/media   WebSocket upgrade → Media Streams protocol → a CallTransport per call
// Both are signature-checked (X-Twilio-Signature) whenever an auth token is configured.

import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { TLSSocket } from "node:tls";
import type { FastifyInstance } from "fastify";
import { type Clock, systemClock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { isLoopbackCaller } from "../loopback.ts";
import type { AdmitCall, CallTransport } from "../transport.ts";
import { serveWebSocketPath } from "../websocket-path.ts";
import { type CallControl, restCallControl } from "./call-control.ts";
import { serveMediaConnection } from "./media-connection.ts";
import { publicBase, signatureValid, wsBase } from "./public-url.ts";
import { rejectTwiml, streamTwiml } from "./twiml.ts";

export const VOICE_PATH = "/twilio/voice";
export const MEDIA_PATH = "/twilio/media";

/** What the Twilio routes read of the bridge's configuration. */
export interface TwilioSettings {
  /** The address Twilio reaches the bridge at (PUBLIC_URL); unset, each request's Host says it. */
  readonly publicUrl?: string | undefined;
  /** Checks X-Twilio-Signature; without it only callers on this machine are answered. */
  readonly authToken?: string | undefined;
  /** With the auth token, hang-up and transfer go through Twilio's REST API. */
  readonly accountSid?: string | undefined;
}

export interface TwilioOptions {
  settings: TwilioSettings;
  log: Logger;
  clock?: Clock;
  /** Called once per call, when its media stream has started; the session attaches to the transport. */
  onCall(transport: CallTransport): void;
  /**
   * Asked by the voice webhook before it answers (Twilio keeps the caller hearing ringing until
   * it does); a refusal answers <Reject/>. The webhook's form fields are the call's parameters.
   */
  admit?: AdmitCall;
  /** Most outbound audio queued at Twilio, ms (default 200). */
  leadMs?: number;
  /** Outbound audio between marks, ms (default 100). */
  markEveryMs?: number;
  /** Replaces the REST call control built from twilio.accountSid/authToken. */
  callControl?: CallControl;
}

export interface TwilioRoutes {
  /** Media streams currently open. */
  readonly activeCalls: number;
  /** Closes every open media stream (the HTTP server's onClose does this too). */
  closeAll(code?: number, reason?: string): void;
}

function isEncrypted(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true;
}

function refuse(socket: Duplex, status: 403 | 404, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

export function registerTwilio(http: FastifyInstance, opts: TwilioOptions): TwilioRoutes {
  const { publicUrl, authToken, accountSid } = opts.settings;
  const log = opts.log.child({ component: "twilio" });
  const clock = opts.clock ?? systemClock;
  const control =
    opts.callControl ?? (accountSid && authToken ? restCallControl({ accountSid, authToken }) : undefined);

  if (!authToken)
    log.warn(
      "no TWILIO_AUTH_TOKEN to check X-Twilio-Signature: the voice webhook and media stream accept callers on this machine only (the simulator, `voice-bridge call`)",
    );
  if (!control)
    log.info(
      "no Twilio account credentials (TWILIO_ACCOUNT_SID + TWILIO_AUTH_TOKEN): hang-up closes the media stream, transfer is unavailable",
    );

  http.register(async (scope) => {
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    scope.post(VOICE_PATH, async (req, reply) => {
      const params = (req.body ?? {}) as Record<string, string>;
      const callLog = log.child({ callSid: params.CallSid });
      const pub = publicBase(publicUrl, req.headers, isEncrypted(req.raw));
      if (!authToken && !isLoopbackCaller(req.socket.remoteAddress, req.headers)) {
        callLog.warn(
          { remote: req.socket.remoteAddress },
          "voice webhook refused: not from this machine, and no TWILIO_AUTH_TOKEN to check its signature",
        );
        return reply.code(403).type("text/plain").send("set TWILIO_AUTH_TOKEN to take calls from Twilio");
      }
      if (authToken) {
        const url = pub.base + req.url;
        if (!signatureValid(authToken, req.headers["x-twilio-signature"], url, params)) {
          callLog.warn(
            { url, signed: req.headers["x-twilio-signature"] !== undefined },
            "voice webhook refused: X-Twilio-Signature missing or wrong",
          );
          return reply.code(403).type("text/plain").send("invalid X-Twilio-Signature");
        }
      }
      const streamUrl = wsBase(pub.base) + MEDIA_PATH;
      if (pub.derived)
        callLog.info(
          { streamUrl },
          "stream URL derived from the request (Host, X-Forwarded-Proto); set PUBLIC_URL to pin it",
        );
      if (opts.admit) {
        const admission = await opts.admit({
          callId: params.CallSid ?? "",
          transport: "twilio",
          ...(params.From ? { from: params.From } : {}),
          ...(params.To ? { to: params.To } : {}),
          params,
        });
        if (!admission.accept) {
          callLog.info(
            { from: params.From, to: params.To, reason: admission.reason },
            "incoming call rejected",
          );
          return reply.type("text/xml").send(rejectTwiml());
        }
      }
      callLog.info({ from: params.From, to: params.To }, "incoming call: answering with a media stream");
      return reply
        .type("text/xml")
        .send(streamTwiml(streamUrl, { From: params.From, To: params.To, CallSid: params.CallSid }));
    });
  });

  const media = serveWebSocketPath(http, {
    path: MEDIA_PATH,
    authorize: (req, socket) => {
      if (!authToken) {
        if (isLoopbackCaller(req.socket.remoteAddress, req.headers)) return true;
        log.warn(
          { remote: req.socket.remoteAddress },
          "media stream refused: not from this machine, and no TWILIO_AUTH_TOKEN to check its signature",
        );
        refuse(socket, 403, "Forbidden");
        return false;
      }
      const pub = publicBase(publicUrl, req.headers, isEncrypted(req));
      const url = wsBase(pub.base) + req.url;
      if (signatureValid(authToken, req.headers["x-twilio-signature"], url, {})) return true;
      log.warn(
        { url, signed: req.headers["x-twilio-signature"] !== undefined },
        "media stream refused: X-Twilio-Signature missing or wrong",
      );
      refuse(socket, 403, "Forbidden");
      return false;
    },
    onSocket: (ws) =>
      serveMediaConnection({
        ws,
        log,
        clock,
        control,
        leadMs: opts.leadMs,
        markEveryMs: opts.markEveryMs,
        onCall: opts.onCall,
      }),
  });

  return {
    get activeCalls() {
      return media.open;
    },
    closeAll: media.closeAll,
  };
}
