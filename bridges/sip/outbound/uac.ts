// An outbound SIP call (UAC): INVITE with our SDP offer through the outbound proxy, digest
// credentials when it challenges (401 or 407, RFC 3261 §22.2–22.3), ringing reported, CANCEL at
// the ring timeout or when the call is given up (only once a provisional came, §9.1), the final
// response read as an outcome, and on a 2xx the dialog made from our side, acknowledged, and the
// call's media started as for an answered inbound call. A 180/183 with SDP starts the media early
// (the same RTP path, receiving only): its audio goes to whoever dialled (the detector), never to
// a session, and the 2xx turns that media into the call's, re-targeted to the 2xx's SDP if it has one.

import { randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import type { Clock, TimerHandle } from "../../../src/core/clock.ts";
import type { DialEvents, DialFailure, DialRequest, PlacedCall } from "../../../src/outbound/dialer.ts";
import type { CallInfo } from "../../transport.ts";
import { Dialog, type DialogDeps } from "../dialog.ts";
import { DigestClient } from "../digest.ts";
import type { SipFlow } from "../flow.ts";
import type {
  NegotiatedMedia,
  RtpEndpoint,
  RtpPortPool,
  SipCallControl,
  SipCallTransport,
  SipCallTransportFactory,
} from "../media-port.ts";
import {
  header,
  headerValues,
  parseUri,
  type SipHeader,
  type SipRequest,
  type SipResponse,
} from "../message.ts";
import { blindTransfer } from "../refer.ts";
import { hostInUri, routeFrom } from "../registration.ts";
import { negotiate } from "../sdp-answer.ts";
import { writeOffer } from "../sdp-offer.ts";
import { newBranch, randomToken } from "../serialize.ts";
import type { SipTimers } from "../transaction.ts";
import type { InviteClients } from "./invite-client.ts";

/** Where INVITEs go (the `outbound.sip.proxy` setting, parsed). */
export interface OutboundProxy {
  readonly host: string;
  readonly port?: number;
  readonly transport: "udp" | "tcp" | "tls";
}

/** The `outbound.sip` settings the UAC uses. */
export interface SipOutboundSettings {
  readonly proxy?: OutboundProxy | undefined;
  readonly user?: string | undefined;
  readonly password?: string | undefined;
  readonly from?: string | undefined;
}

export interface UacDeps {
  readonly proxy: OutboundProxy;
  /** Digest credentials for the proxy's challenges. */
  readonly user?: string;
  readonly password?: string;
  /** Caller id when the request names none: a number or a SIP URI. */
  readonly from?: string;
  readonly publicIp?: string;
  readonly clock: Clock;
  readonly timers: SipTimers;
  readonly mediaTimeoutMs: number;
  readonly invites: InviteClients;
  /** A non-INVITE request (CANCEL) through a client transaction. */
  readonly request: (req: SipRequest, flow: SipFlow) => Promise<SipResponse>;
  readonly dialogs: DialogDeps;
  readonly addDialog: (d: Dialog) => void;
  readonly trust: (address: string) => void;
  readonly flowTo: (transport: SipFlow["transport"], address: string, port: number, name: string) => SipFlow;
  readonly listenPort: (transport: SipFlow["transport"]) => number;
  readonly ports: RtpPortPool;
  readonly createTransport: SipCallTransportFactory;
}

/** A final response (or our own ending) as a dial outcome. */
export function failureOf(status: number, reason: string, ended?: "timeout" | "canceled"): DialFailure {
  const line = `${status} ${reason}`;
  // Given up before anything answered: the INVITE's own timeout (a local 408) is the cancel too.
  if ((status === 487 || status === 408) && ended === "canceled")
    return { outcome: "canceled", reason: line };
  if (status === 487 && ended === "timeout")
    return { outcome: "no-answer", reason: `${line} (ring timeout)` };
  if (status === 486 || status === 600) return { outcome: "busy", reason: line };
  if (status === 408 || status === 480) return { outcome: "no-answer", reason: line };
  return { outcome: "failed", reason: line };
}

const TRANSPORT: Record<OutboundProxy["transport"], SipFlow["transport"]> = {
  udp: "UDP",
  tcp: "TCP",
  tls: "TLS",
};

export function dialSip(d: UacDeps, req: DialRequest, events: DialEvents): PlacedCall {
  const call = new OutboundSipCall(d, req, events);
  void call.start();
  return { cancel: () => call.giveUp("canceled") };
}

class OutboundSipCall {
  readonly #d: UacDeps;
  readonly #req: DialRequest;
  readonly #events: DialEvents;
  readonly #localTag = randomToken();
  readonly #digest: DigestClient | undefined;
  #authHeader: "authorization" | "proxy-authorization" = "proxy-authorization";
  #challenges = 0;
  #cseq = 0;
  #invite: SipRequest | undefined;
  #flow: SipFlow | undefined;
  #endpoint: RtpEndpoint | undefined;
  #offerKey: Uint8Array | undefined;
  #address = "";
  #provisional = false;
  /** Why we are giving up (CANCEL sent or due), if we are. */
  #givingUp: "timeout" | "canceled" | undefined;
  #cancelSent = false;
  #ringTimer: TimerHandle | undefined;
  #dialog: Dialog | undefined;
  #ack: Buffer | undefined;
  #done = false;
  /** The media of the first early dialog (a 180/183 with SDP), receiving only until the answer. */
  #early: { transport: SipCallTransport; media: NegotiatedMedia } | undefined;
  /** The answered dialog's control, once there is one (the early media's transport asks through it). */
  #control: SipCallControl | undefined;

  constructor(d: UacDeps, req: DialRequest, events: DialEvents) {
    this.#d = d;
    this.#req = req;
    this.#events = events;
    this.#digest = d.user && d.password ? new DigestClient(d.user, d.password) : undefined;
  }

  async start(): Promise<void> {
    const { proxy } = this.#d;
    const transport = TRANSPORT[proxy.transport];
    const port = proxy.port ?? (proxy.transport === "tls" ? 5061 : 5060);
    try {
      const { address } = await lookup(proxy.host);
      this.#d.trust(address);
      this.#address = this.#d.publicIp ?? (await routeFrom(address, port));
      this.#flow = this.#d.flowTo(transport, address, port, proxy.host);
      this.#endpoint = await this.#d.ports.open();
    } catch (err) {
      this.#fail({ outcome: "failed", reason: `could not start the call: ${(err as Error).message}` });
      return;
    }
    if (this.#givingUp) {
      this.#fail(failureOf(487, "Request Terminated", this.#givingUp));
      return;
    }
    this.#ringTimer = this.#d.clock.setTimeout(() => this.giveUp("timeout"), this.#req.ringTimeoutS * 1000);
    this.#send();
  }

  get #log() {
    return this.#req.log;
  }

  /** The ring timeout or DELETE /calls: CANCEL once the far end has answered provisionally. */
  giveUp(why: "timeout" | "canceled"): void {
    if (this.#done || this.#dialog || this.#givingUp) return;
    this.#givingUp = why;
    this.#log.info(
      { why },
      why === "timeout" ? "sip: ring timeout, cancelling" : "sip: call given up, cancelling",
    );
    if (this.#provisional) this.#cancel();
    // Nothing heard yet: the CANCEL waits for the first provisional (or the INVITE times out).
  }

  #cancel(): void {
    const invite = this.#invite;
    if (!invite || !this.#flow || this.#cancelSent) return;
    this.#cancelSent = true;
    const headers: SipHeader[] = [
      { name: "via", value: headerValues(invite, "via")[0]! },
      { name: "max-forwards", value: "70" },
      { name: "from", value: header(invite, "from")! },
      { name: "to", value: header(invite, "to")! },
      { name: "call-id", value: this.#req.callId },
      { name: "cseq", value: `${this.#cseq} CANCEL` },
      ...invite.headers.filter((h) => h.name === "route"),
    ];
    void this.#d
      .request(
        { kind: "request", method: "CANCEL", uri: invite.uri, headers, body: Buffer.alloc(0) },
        this.#flow,
      )
      .then((res) => this.#log.debug({ status: res.status }, "sip: CANCEL answered"));
  }

  #send(): void {
    const flow = this.#flow!;
    const invite = this.#request(flow);
    this.#invite = invite;
    this.#d.invites.send(invite, flow, (res, again) => this.#onResponse(res, again));
  }

  #onResponse(res: SipResponse, again: boolean): void {
    if (res.status < 200) {
      if (res.status > 100) this.#events.ringing(`${res.status} ${res.reason}`);
      if (res.status > 100 && res.body.length > 0 && !this.#early && !this.#givingUp) this.#earlyMedia(res);
      if (!this.#provisional) {
        this.#provisional = true;
        if (this.#givingUp) this.#cancel();
      }
      return;
    }
    if (res.status < 300) {
      this.#answered(res, again);
      return;
    }
    if ((res.status === 401 || res.status === 407) && this.#retryWithCredentials(res)) return;
    this.#fail(failureOf(res.status, res.reason, this.#givingUp));
  }

  /** Answers a challenge with the account's credentials (twice at most: a stale nonce may need one more). */
  #retryWithCredentials(res: SipResponse): boolean {
    if (!this.#digest || this.#givingUp || this.#challenges >= 2) return false;
    const name = res.status === 401 ? "www-authenticate" : "proxy-authenticate";
    const challenge = this.#digest.challenged(headerValues(res, name));
    if (!challenge || (this.#challenges > 0 && !challenge.stale)) return false;
    this.#challenges++;
    this.#authHeader = res.status === 401 ? "authorization" : "proxy-authorization";
    this.#log.debug({ status: res.status, realm: challenge.realm }, "sip: INVITE challenged, answering");
    this.#send();
    return true;
  }

  /** A provisional response with SDP: its media is heard from now on (by the detector), and never sent to. */
  #earlyMedia(res: SipResponse): void {
    const answer = negotiate(
      res.body.toString("utf8"),
      this.#d.dialogs.codecs,
      this.#d.dialogs.srtp,
      this.#offerKey,
    );
    if (!answer.ok) {
      this.#log.warn(
        { status: res.status, reason: answer.reason },
        "sip: early media we cannot use, ignored",
      );
      return;
    }
    let sink: ((frame: Int16Array) => void) | undefined;
    const control: SipCallControl = {
      hangUp: async (reason) => {
        if (this.#control) return this.#control.hangUp(reason);
        // Before the answer the only way off the call is to give it up (the RTP side failed).
        this.#log.error({ reason }, "sip: early media failed, giving the call up");
        this.giveUp("canceled");
      },
      transfer: (target) =>
        this.#control
          ? this.#control.transfer(target)
          : Promise.reject(new Error("transfer: the call is not answered yet")),
    };
    const media: NegotiatedMedia = { ...answer.media, early: true };
    try {
      const transport = this.#d.createTransport({
        info: this.#info(),
        endpoint: this.#endpoint!,
        media,
        control,
        clock: this.#d.clock,
        log: this.#log,
        mediaTimeoutMs: this.#d.mediaTimeoutMs,
        earlyAudio: (pcm) => sink?.(pcm),
      });
      this.#early = { transport, media };
      sink = this.#events.earlyMedia?.(transport.inputRate);
      this.#log.info(
        {
          status: res.status,
          codec: media.codec.name,
          remote: `${media.remote.address}:${media.remote.port}`,
        },
        "sip: early media: heard by the detector, not the agent, until the answer",
      );
    } catch (err) {
      this.#log.warn({ err }, "sip: early media could not start, ignored");
    }
  }

  #info(): CallInfo {
    const from = this.#fromUser();
    return {
      callId: this.#req.callId,
      transport: "sip",
      ...(from ? { from } : {}),
      to: parseUri(this.#target())?.user ?? this.#target(),
      params: { direction: "outbound" },
    };
  }

  #answered(res: SipResponse, again: boolean): void {
    const seq = this.#cseq;
    if (again) {
      // A retransmitted 2xx: our ACK was lost; the same ACK again.
      if (this.#dialog && this.#ack) this.#dialog.acknowledge(seq, this.#ack);
      return;
    }
    const dialog = new Dialog(this.#d.dialogs, {
      invite: this.#invite!,
      answer: res,
      flow: this.#flow!,
      localTag: this.#localTag,
      address: this.#address,
      sipPort: this.#d.listenPort(this.#flow!.transport),
      endpoint: this.#endpoint!,
    });
    this.#dialog = dialog;
    this.#d.addDialog(dialog);
    this.#ack = dialog.acknowledge(seq);
    this.#d.clock.clearTimeout(this.#ringTimer);
    const early = this.#early;
    // No SDP in the 2xx after early media: the 183's answer stands (RFC 3261 §13.2.1, one answer).
    const answer =
      res.body.length > 0
        ? negotiate(res.body.toString("utf8"), this.#d.dialogs.codecs, this.#d.dialogs.srtp, this.#offerKey)
        : early
          ? { ok: true as const, media: { ...early.media, early: false } }
          : undefined;
    if (this.#givingUp || !answer?.ok) {
      // Answered as we gave up, or with nothing we can play: the call is hung up at once.
      const failure = this.#givingUp
        ? failureOf(487, "Request Terminated (answered as it was given up)", this.#givingUp)
        : {
            outcome: "failed" as const,
            reason: `answered without usable media: ${answer && !answer.ok ? answer.reason : "no SDP answer"}`,
          };
      void dialog.hangUp(failure.reason);
      early?.transport.end(failure.reason);
      this.#done = true;
      this.#events.failed(failure);
      return;
    }
    dialog.media = answer.media;
    this.#done = true;
    this.#log.info(
      { codec: answer.media.codec.name, rtpPort: this.#endpoint!.port, afterEarlyMedia: early !== undefined },
      "sip: outbound call answered",
    );
    const control = dialog.control((target) =>
      blindTransfer(dialog, this.#d.clock, 64 * this.#d.timers.t1, target),
    );
    this.#control = control;
    try {
      let transport: SipCallTransport;
      if (early) {
        // The early media's path goes on as the call's: sending from now on, to the 2xx's address.
        transport = early.transport;
        transport.updateMedia(answer.media);
      } else
        transport = this.#d.createTransport({
          info: this.#info(),
          endpoint: dialog.endpoint,
          media: answer.media,
          control,
          clock: this.#d.clock,
          log: dialog.log,
          mediaTimeoutMs: this.#d.mediaTimeoutMs,
        });
      dialog.transport = transport;
      if (dialog.ended) transport.end("call ended before media started");
      else this.#events.answered(transport);
    } catch (err) {
      dialog.log.error({ err }, "sip: media side failed to start, hanging up");
      void dialog.hangUp("media failed");
    }
  }

  #fail(failure: DialFailure): void {
    if (this.#done) return;
    this.#done = true;
    this.#d.clock.clearTimeout(this.#ringTimer);
    this.#early?.transport.end(`not answered: ${failure.reason}`);
    this.#endpoint?.close();
    this.#log.info({ outcome: failure.outcome, reason: failure.reason }, "sip: outbound call not answered");
    this.#events.failed(failure);
  }

  /** The Request-URI: a SIP URI as given, a number at the proxy's host. */
  #target(): string {
    const to = this.#req.to;
    if (/^sips?:/i.test(to)) return to;
    const { host, port } = this.#d.proxy;
    return `sip:${to}@${hostInUri(host)}${port ? `:${port}` : ""}`;
  }

  #fromUri(): string {
    const from = this.#req.from ?? this.#d.from ?? this.#d.user ?? "voice-bridge";
    return /^sips?:/i.test(from) ? from : `sip:${from}@${hostInUri(this.#d.proxy.host)}`;
  }

  #fromUser(): string | undefined {
    return parseUri(this.#fromUri())?.user;
  }

  #request(flow: SipFlow): SipRequest {
    const { proxy, codecs, srtp } = {
      proxy: this.#d.proxy,
      codecs: this.#d.dialogs.codecs,
      srtp: this.#d.dialogs.srtp,
    };
    const uri = this.#target();
    const port = this.#d.listenPort(flow.transport);
    const t = flow.transport === "UDP" ? "" : `;transport=${flow.transport.toLowerCase()}`;
    const host = hostInUri(this.#address);
    if (srtp === "required") this.#offerKey ??= randomBytes(30);
    const sdp = writeOffer({
      address: this.#address,
      port: this.#endpoint!.port,
      sessionId: Math.floor(Math.random() * 2 ** 31),
      version: 1,
      codecs,
      ...(this.#offerKey ? { srtpKey: this.#offerKey } : {}),
    });
    const targetHost = parseUri(uri)?.host;
    const proxyUri = `sip:${hostInUri(proxy.host)}${proxy.port ? `:${proxy.port}` : ""};lr${t}`;
    const auth = this.#digest?.authorization("INVITE", uri);
    const headers: SipHeader[] = [
      { name: "via", value: `SIP/2.0/${flow.transport} ${host}:${port};branch=${newBranch()};rport` },
      { name: "max-forwards", value: "70" },
      // A URI elsewhere than the proxy still goes through it (loose routing).
      ...(targetHost && targetHost !== proxy.host ? [{ name: "route", value: `<${proxyUri}>` }] : []),
      { name: "from", value: `<${this.#fromUri()}>;tag=${this.#localTag}` },
      { name: "to", value: `<${uri}>` },
      { name: "call-id", value: this.#req.callId },
      { name: "cseq", value: `${++this.#cseq} INVITE` },
      { name: "contact", value: `<sip:voice-bridge@${host}:${port}${t}>` },
      { name: "allow", value: "INVITE, ACK, CANCEL, BYE, OPTIONS, UPDATE, INFO, NOTIFY" },
      { name: "user-agent", value: "voice-bridge" },
      ...(auth ? [{ name: this.#authHeader, value: auth }] : []),
      { name: "content-type", value: "application/sdp" },
    ];
    return { kind: "request", method: "INVITE", uri, headers, body: Buffer.from(sdp) };
  }
}
