// Outbound Twilio calls: `calls.create` through the `twilio` helper with TwiML that connects a
// media stream back to this bridge (its <Parameter> `outboundCallId` ties the stream to the call),
// status callbacks for ringing and the ways a call goes unanswered, and Twilio's own
// answering-machine detection (asyncAmd, DetectMessageEnd) whose AnsweredBy becomes the call's
// verdict. Callbacks are signature-checked (X-Twilio-Signature) like the voice webhook.
import type { FastifyInstance } from "fastify";
import twilio from "twilio";
import type { Logger } from "../../src/core/log.ts";
import type { CarrierAmd, DialEvents, Dialer, DialRequest } from "../../src/outbound/dialer.ts";
import { PassThroughTransport } from "../../src/session/pass-through-transport.ts";
import type { CallInfo, CallTransport } from "../transport.ts";
import { signatureValid, wsBase } from "./public-url.ts";
import { MEDIA_PATH } from "./routes.ts";
import { streamTwiml } from "./twiml.ts";

export const STATUS_PATH = "/twilio/outbound/status";
export const AMD_PATH = "/twilio/outbound/amd";
/** The stream parameter naming the outbound call a media stream belongs to. */
export const OUTBOUND_PARAM = "outboundCallId";

export interface TwilioDialerOptions {
  readonly accountSid: string;
  readonly authToken: string;
  /** The bridge's public https URL (PUBLIC_URL): Twilio's callbacks and the media stream reach it there. */
  readonly publicUrl: string;
  /** Caller id (a Twilio number) when the request names none. */
  readonly from?: string;
  /** Another base URL for Twilio's REST API (a compatible gateway; tests' local fake). */
  readonly apiBase?: string;
  /** Ask Twilio's own answering-machine detection (else the bridge's runs on the stream). */
  readonly twilioAmd: boolean;
  readonly log: Logger;
}

interface Pending {
  readonly req: DialRequest;
  readonly events: DialEvents;
  readonly askedAt: number;
  sid?: string;
  answered: boolean;
  done: boolean;
  cancelWanted: boolean;
}

export interface TwilioOutbound {
  readonly dial: Dialer;
  /** A media stream that belongs to an outbound call: handed to that call (true), else false. */
  claim(transport: CallTransport): boolean;
}

/** The helper's HTTP client, sending to `base` instead of https://api.twilio.com (the published way: a custom httpClient). */
export function rebasedClient(base: string): twilio.RequestClient {
  const client = new twilio.RequestClient();
  const send = client.request.bind(client);
  client.request = ((opts: Parameters<typeof send>[0]) => {
    const u = new URL(opts.uri);
    return send({ ...opts, uri: `${base.replace(/\/+$/, "")}${u.pathname}${u.search}` });
  }) as typeof client.request;
  return client;
}

/** The call's transport under our call id (Twilio's names it by its CallSid). */
class OutboundStream extends PassThroughTransport {
  override readonly info: CallInfo;
  constructor(inner: CallTransport, info: CallInfo) {
    super(inner);
    this.info = info;
  }
}

export function registerTwilioOutbound(http: FastifyInstance, o: TwilioDialerOptions): TwilioOutbound {
  const log = o.log.child({ component: "twilio-outbound" });
  const client = twilio(o.accountSid, o.authToken, o.apiBase ? { httpClient: rebasedClient(o.apiBase) } : {});
  const pending = new Map<string, Pending>();
  const base = o.publicUrl.replace(/\/+$/, "");

  const settle = (p: Pending) => {
    p.done = true;
    setTimeout(() => pending.delete(p.req.callId), 60_000).unref();
  };

  http.register(async (scope) => {
    scope.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string" },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    const signed = (url: string, header: unknown, params: Record<string, string>) =>
      signatureValid(o.authToken, header as string | string[] | undefined, base + url, params);
    scope.post<{ Querystring: { callId?: string } }>(STATUS_PATH, async (req, reply) => {
      const params = (req.body ?? {}) as Record<string, string>;
      if (!signed(req.url, req.headers["x-twilio-signature"], params)) {
        log.warn({ url: req.url }, "status callback refused: X-Twilio-Signature missing or wrong");
        return reply.code(403).send("invalid X-Twilio-Signature");
      }
      const p = pending.get(req.query.callId ?? "");
      if (!p) return reply.code(204).send();
      const status = params.CallStatus ?? "";
      p.req.log.info({ callSid: params.CallSid, status }, "twilio: call status");
      if (status === "ringing") p.events.ringing("ringing");
      else if (["busy", "no-answer", "failed", "canceled"].includes(status) && !p.answered && !p.done) {
        settle(p);
        const code = params.SipResponseCode ? ` (SIP ${params.SipResponseCode})` : "";
        p.events.failed({
          outcome: status as "busy" | "no-answer" | "failed" | "canceled",
          reason: `Twilio CallStatus ${status}${code}`,
        });
      } else if (status === "completed" && !p.answered && !p.done) {
        settle(p);
        p.events.failed({
          outcome: "failed",
          reason: "Twilio CallStatus completed before the media stream started",
        });
      }
      return reply.code(204).send();
    });
    scope.post<{ Querystring: { callId?: string } }>(AMD_PATH, async (req, reply) => {
      const params = (req.body ?? {}) as Record<string, string>;
      if (!signed(req.url, req.headers["x-twilio-signature"], params)) {
        log.warn({ url: req.url }, "AMD callback refused: X-Twilio-Signature missing or wrong");
        return reply.code(403).send("invalid X-Twilio-Signature");
      }
      const p = pending.get(req.query.callId ?? "");
      const answeredBy = params.AnsweredBy ?? "unknown";
      if (p?.events.carrierAmd) {
        const amd: CarrierAmd = {
          result: answeredBy === "human" ? "human" : answeredBy === "unknown" ? "unknown" : "machine",
          decidedAfterMs: Number(params.MachineDetectionDuration) || 0,
          detail: answeredBy,
        };
        p.req.log.info({ answeredBy, ms: amd.decidedAfterMs }, "twilio: answering-machine detection");
        p.events.carrierAmd(amd);
      }
      return reply.code(204).send();
    });
  });

  const dial: Dialer = (req, events) => {
    const p: Pending = {
      req,
      events,
      askedAt: Date.now(),
      answered: false,
      done: false,
      cancelWanted: false,
    };
    pending.set(req.callId, p);
    const from = req.from ?? o.from;
    const twiml = streamTwiml(wsBase(base) + MEDIA_PATH, {
      [OUTBOUND_PARAM]: req.callId,
      From: from,
      To: req.to,
    });
    const query = `?callId=${encodeURIComponent(req.callId)}`;
    client.calls
      .create({
        to: req.to,
        from: from ?? "",
        twiml,
        timeout: req.ringTimeoutS,
        statusCallback: `${base}${STATUS_PATH}${query}`,
        statusCallbackMethod: "POST",
        statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
        ...(o.twilioAmd && req.machineDetection
          ? {
              machineDetection: "DetectMessageEnd",
              asyncAmd: "true",
              asyncAmdStatusCallback: `${base}${AMD_PATH}${query}`,
              asyncAmdStatusCallbackMethod: "POST",
            }
          : {}),
      })
      .then(
        (call) => {
          p.sid = call.sid;
          req.log.info({ callSid: call.sid, status: call.status }, "twilio: call created");
          if (p.cancelWanted) void cancel(p);
        },
        (err: Error & { status?: number; code?: number }) => {
          if (p.done) return;
          settle(p);
          events.failed({
            outcome: "failed",
            reason: `Twilio refused the call: ${err.message}${err.code ? ` (code ${err.code})` : ""}`,
          });
        },
      );
    return {
      carrierAmd: o.twilioAmd && req.machineDetection === true,
      cancel: () => {
        p.cancelWanted = true;
        if (p.sid && !p.answered && !p.done) void cancel(p);
      },
    };
  };

  const cancel = async (p: Pending) => {
    try {
      await client.calls(p.sid!).update({ status: "canceled" });
    } catch (err) {
      p.req.log.warn({ err: (err as Error).message }, "twilio: cancel refused");
    }
  };

  return {
    dial,
    claim(transport) {
      const id = transport.info.params[OUTBOUND_PARAM];
      const p = id ? pending.get(id) : undefined;
      if (!p || p.done || p.answered) return false;
      p.answered = true;
      settle(p);
      const { [OUTBOUND_PARAM]: _, ...params } = transport.info.params;
      p.events.answered(
        new OutboundStream(transport, {
          ...transport.info,
          callId: p.req.callId,
          params: { ...params, direction: "outbound", callSid: transport.info.callId },
        }),
      );
      return true;
    },
  };
}
