// One answered call's dialog (RFC 3261 §12-15): the 2xx retransmitted until its ACK (T1 doubling
// to T2, BYE after 64·T1 without one), in-dialog requests we send (BYE, REFER), re-INVITE and
// UPDATE with the direction mirrored, the session timer (RFC 4028), and the end of the call
// told to the media side once.
import { randomBytes } from "node:crypto";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { ClientTransactions } from "./client-transaction.ts";
import type { SipFlow } from "./flow.ts";
import { dtmfRelayBody } from "./info-dtmf.ts";
import type {
  NegotiatedMedia,
  RtpEndpoint,
  SipCallControl,
  SipCallTransport,
  SipCodecName,
  SrtpKeys,
} from "./media-port.ts";
import {
  bareValue,
  header,
  params,
  parseCSeq,
  parseNameAddr,
  parseUri,
  type SipHeader,
  type SipRequest,
  type SipResponse,
  splitList,
} from "./message.ts";
import { negotiate, writeAnswer } from "./sdp-answer.ts";
import type { SrtpPolicy } from "./sdp-crypto.ts";
import { writeOffer } from "./sdp-offer.ts";
import { makeResponse, newBranch, serialize } from "./serialize.ts";
import { refuseTooSmall, SessionTimer } from "./session-timer.ts";
import type { ServerTransaction, SipTimers } from "./transaction.ts";

export interface DialogDeps {
  readonly clock: Clock;
  readonly timers: SipTimers;
  readonly client: ClientTransactions;
  readonly codecs: readonly SipCodecName[];
  /** sip.srtp: whether SRTP is taken, and whether plain RTP is. */
  readonly srtp: SrtpPolicy;
  readonly log: Logger;
  /** Headers every 2xx to INVITE/UPDATE carries (Allow, Supported). */
  readonly capabilities: readonly SipHeader[];
  /** The dialog ended: drop it from the table. */
  forget(d: Dialog): void;
  /** A new TCP or TLS connection, when the one the call came on has closed. */
  connect(transport: SipFlow["transport"], address: string, port: number): SipFlow;
}

export interface DialogInit {
  readonly invite: SipRequest;
  /**
   * The 2xx to our own INVITE, when the bridge placed the call (UAC): the dialog is then seen from
   * the caller's side (our From and tag, their To and Contact, the Record-Route reversed).
   */
  readonly answer?: SipResponse;
  readonly flow: SipFlow;
  readonly localTag: string;
  /** Our address for SDP and Contact, and the port the flow's transport listens on. */
  readonly address: string;
  readonly sipPort: number;
  readonly endpoint: RtpEndpoint;
  /** Absent for an INVITE without an offer: our 200 carries one and the ACK the answer (late offer). */
  readonly media?: NegotiatedMedia;
  readonly offer?: { index: number; lines: Parameters<typeof writeAnswer>[0]["lines"] };
}

type State = "waiting-ack" | "confirmed" | "ended";

/** The 2xx awaiting its ACK, and the CSeq that ACK carries. */
interface Unacked {
  readonly bytes: Buffer;
  readonly cseq: number;
  retransmit?: TimerHandle;
  giveUp?: TimerHandle;
}

export class Dialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** Where our requests go: the INVITE's flow, or a new TCP connection once that one closed. */
  flow: SipFlow;
  readonly endpoint: RtpEndpoint;
  readonly log: Logger;
  /** The caller's URI (the INVITE's From). */
  readonly remoteUri: string;
  /** Undefined only while a late offer awaits its answer in the ACK. */
  media?: NegotiatedMedia;
  transport?: SipCallTransport;
  /** Late offer: the ACK's answer settled the media (the call setup then starts it). */
  onMedia?: (media: NegotiatedMedia) => void;
  /** A transfer in progress is told of each NOTIFY (refer.ts). */
  onNotify?: (tx: ServerTransaction) => void;
  /** The dialog ended (refer.ts rejects a pending transfer). */
  onEnd?: (reason: string) => void;

  readonly #deps: DialogDeps;
  readonly #address: string;
  readonly #sipPort: number;
  readonly #localHeader: string;
  readonly #remoteHeader: string;
  #remoteTarget: string;
  readonly #routes: string[];
  /** Our SRTP key in a late offer of ours (sip.srtp required). */
  #offerKey: Buffer | undefined;
  /** The INVITE was for a sips: URI. */
  readonly #secure: boolean;
  #offer?: DialogInit["offer"];
  #state: State = "waiting-ack";
  #localCseq = 1;
  #remoteCseq: number;
  readonly #sessionId = Math.floor(Math.random() * 2 ** 31);
  #version = 1;
  #unacked?: Unacked;
  readonly #sessionTimer: SessionTimer;

  constructor(deps: DialogDeps, init: DialogInit) {
    this.#deps = deps;
    const inv = init.invite;
    const ours = init.answer;
    this.callId = header(inv, "call-id") ?? "";
    this.localTag = init.localTag;
    const from = ours ? (header(ours, "to") ?? "") : (header(inv, "from") ?? "");
    this.remoteTag = params(from).get("tag") ?? "";
    this.remoteUri = parseNameAddr(from)?.uri ?? "";
    this.flow = init.flow;
    this.endpoint = init.endpoint;
    this.media = init.media;
    this.#offer = init.offer;
    this.#address = init.address;
    this.#sipPort = init.sipPort;
    this.#localHeader = ours ? (header(inv, "from") ?? "") : `${header(inv, "to")};tag=${init.localTag}`;
    this.#remoteHeader = from;
    const target = ours ?? inv;
    this.#remoteTarget = parseNameAddr(header(target, "contact") ?? "")?.uri ?? this.remoteUri;
    // The route set: the INVITE's Record-Route as received (UAS), the 2xx's reversed (UAC) (RFC 3261 §12.1).
    const recorded = target.headers
      .filter((h) => h.name === "record-route")
      .flatMap((h) => splitList(h.value));
    this.#routes = ours ? recorded.reverse() : recorded;
    this.#secure = /^sips:/i.test(inv.uri);
    const inviteSeq = parseCSeq(header(inv, "cseq"))?.seq ?? 0;
    this.#remoteCseq = ours ? 0 : inviteSeq;
    if (ours) {
      this.#localCseq = inviteSeq + 1;
      this.#state = "confirmed";
    }
    this.log = deps.log.child({ callId: this.callId });
    this.#sessionTimer = new SessionTimer(deps.clock, (interval) => {
      this.log.warn({ interval }, "sip: session not refreshed, hanging up");
      void this.hangUp("session expired", true);
    });
  }

  get key(): string {
    return dialogKey(this.callId, this.localTag, this.remoteTag);
  }

  get ended(): boolean {
    return this.#state === "ended";
  }

  get contact(): string {
    const t = this.flow.transport === "UDP" ? "" : `;transport=${this.flow.transport.toLowerCase()}`;
    // A sips: call keeps sips: in our Contact (RFC 5630): requests to us must stay on TLS too.
    const scheme = this.flow.transport === "TLS" && this.#secure ? "sips" : "sip";
    return `<${scheme}:voice-bridge@${this.#address}:${this.#sipPort}${t}>`;
  }

  /** Answers the INVITE (initial or re-) in `tx` with our SDP and waits for the ACK. */
  answer(tx: ServerTransaction): void {
    const req = tx.request;
    const sdp = this.#sdp();
    const headers: SipHeader[] = [{ name: "contact", value: this.contact }, ...this.#deps.capabilities];
    for (const h of req.headers) if (h.name === "record-route") headers.push(h);
    headers.push(...this.#sessionTimer.negotiate(req));
    const res = makeResponse(req, 200, {
      toTag: this.localTag,
      headers,
      body: { type: "application/sdp", content: sdp },
    });
    tx.respond(res);
    this.#awaitAck(serialize(res), parseCSeq(header(req, "cseq"))?.seq ?? 0);
  }

  #awaitAck(bytes: Buffer, cseq: number): void {
    const { clock, timers } = this.#deps;
    const pending: Unacked = { bytes, cseq };
    this.#unacked = pending;
    const again = (interval: number): void => {
      pending.retransmit = clock.setTimeout(() => {
        this.flow.send(bytes);
        again(Math.min(2 * interval, timers.t2));
      }, interval);
    };
    // On TCP the hop is reliable: no retransmission, but the ACK is still awaited.
    if (!this.flow.reliable) again(timers.t1);
    pending.giveUp = clock.setTimeout(() => {
      this.log.warn({ cseq }, "sip: no ACK for our 2xx within 64*T1, hanging up");
      this.#clearAck();
      void this.hangUp("no ACK for the answer", true);
    }, 64 * timers.t1);
  }

  #clearAck(): void {
    if (!this.#unacked) return;
    this.#deps.clock.clearTimeout(this.#unacked.retransmit);
    this.#deps.clock.clearTimeout(this.#unacked.giveUp);
    this.#unacked = undefined;
  }

  /** An ACK for a 2xx (a request of its own, matched to the dialog). */
  ack(req: SipRequest): void {
    const cseq = parseCSeq(header(req, "cseq"))?.seq;
    if (!this.#unacked || cseq !== this.#unacked.cseq) return;
    this.#clearAck();
    if (!this.media) this.#takeAnswer(req);
    if (this.#state === "waiting-ack") {
      this.#state = "confirmed";
      this.log.info("sip: call confirmed (ACK)");
    }
  }

  /** Late offer: the ACK carries the answer to the offer in our 200 (RFC 3261 §13.2.1). */
  #takeAnswer(ack: SipRequest): void {
    const result =
      ack.body.length > 0
        ? negotiate(ack.body.toString("utf8"), this.#deps.codecs, this.#deps.srtp, this.#offerKey)
        : undefined;
    if (!result?.ok) {
      const reason = result ? result.reason : "the ACK carries no SDP answer";
      this.log.warn({ reason }, "sip: late offer got no usable answer, hanging up");
      void this.hangUp("no usable SDP answer in the ACK", true);
      return;
    }
    this.#setMedia(result.media, { index: result.index, lines: result.lines });
  }

  #setMedia(media: NegotiatedMedia, offer: NonNullable<DialogInit["offer"]>): void {
    const first = !this.media;
    this.media = media;
    this.#offer = offer;
    if (this.transport) this.transport.updateMedia(media);
    else if (first) this.onMedia?.(media);
  }

  /**
   * The ACK of the 2xx to our INVITE (RFC 3261 §13.2.2.4): the INVITE's CSeq number, a new branch,
   * to the remote target through the route set; sent again for each retransmitted 2xx (`bytes`).
   */
  acknowledge(inviteSeq: number, bytes?: Buffer): Buffer {
    const ack = bytes ?? serialize(this.#inDialog("ACK", inviteSeq));
    this.#usableFlow().send(ack);
    return ack;
  }

  /** Checks an in-dialog request's CSeq (RFC 3261 §12.2.2); false means it was answered 500. */
  inOrder(tx: ServerTransaction): boolean {
    const seq = parseCSeq(header(tx.request, "cseq"))?.seq ?? 0;
    if (seq < this.#remoteCseq) {
      tx.respond(makeResponse(tx.request, 500, { reason: "CSeq Out Of Order" }));
      return false;
    }
    this.#remoteCseq = seq;
    return true;
  }

  /** A re-INVITE or UPDATE: new media (or none: a session refresh), answered with the right direction. */
  refresh(tx: ServerTransaction): void {
    const req = tx.request;
    if (refuseTooSmall(tx)) return;
    if (req.method === "INVITE" && this.#unacked) {
      tx.respond(makeResponse(req, 491, { headers: [{ name: "retry-after", value: "1" }] }));
      return;
    }
    // A target refresh (RFC 3261 §12.2.2): the caller may have moved.
    const contact = parseNameAddr(header(req, "contact") ?? "")?.uri;
    if (contact) this.#remoteTarget = contact;
    if (req.body.length > 0) {
      const type = bareValue(header(req, "content-type"));
      if (type !== "application/sdp") {
        tx.respond(makeResponse(req, 415, { headers: [{ name: "accept", value: "application/sdp" }] }));
        return;
      }
      const was = this.media?.srtp;
      let offer = negotiate(req.body.toString("utf8"), this.#deps.codecs, this.#deps.srtp, was?.localKey);
      // New SRTP keys (or SRTP switched on or off) mid-call are not taken: the media keeps its sessions.
      if (offer.ok && this.media && !sameKeys(was, offer.media.srtp))
        offer = { ok: false, status: 488, reason: "SRTP keys cannot change during the call" };
      if (!offer.ok) {
        this.log.info({ reason: offer.reason }, "sip: re-offer refused, keeping the current media");
        tx.respond(makeResponse(req, 488, { headers: [warning(offer.reason)] }));
        return;
      }
      this.#setMedia(offer.media, { index: offer.index, lines: offer.lines });
      this.log.info(
        { direction: offer.media.direction, codec: offer.media.codec.name },
        "sip: media changed by re-offer",
      );
    }
    this.#sessionTimer.negotiate(req);
    this.#sessionTimer.restart();
    if (req.method === "INVITE") this.answer(tx);
    else
      tx.respond(
        makeResponse(req, 200, {
          toTag: this.localTag,
          headers: [
            { name: "contact", value: this.contact },
            ...this.#deps.capabilities,
            ...this.#sessionTimer.negotiate(req),
          ],
          ...(req.body.length > 0 ? { body: { type: "application/sdp", content: this.#sdp() } } : {}),
        }),
      );
  }

  /** Our SDP: the answer to their offer, or (late offer, nothing agreed yet) an offer of every codec. */
  #sdp(): string {
    const common = {
      address: this.#address,
      port: this.endpoint.port,
      sessionId: this.#sessionId,
      version: this.#version++,
    };
    if (!this.media || !this.#offer) {
      // Late offer: SRTP offered only when required (a plain offer suits every other policy).
      if (this.#deps.srtp === "required") this.#offerKey ??= randomBytes(30);
      return writeOffer({
        ...common,
        codecs: this.#deps.codecs,
        ...(this.#offerKey ? { srtpKey: this.#offerKey } : {}),
      });
    }
    return writeAnswer({ ...common, media: this.media, ...this.#offer });
  }

  startSessionTimer(): void {
    this.#sessionTimer.restart();
  }

  /** The caller's BYE. */
  byeReceived(tx: ServerTransaction): void {
    tx.respond(makeResponse(tx.request, 200));
    this.log.info("sip: caller hung up (BYE)");
    this.end("caller hung up");
  }

  /** Ends the dialog locally: timers stopped, media told (unless it asked), forgotten. */
  end(reason: string, tellMedia = true): void {
    if (this.#state === "ended") return;
    this.#state = "ended";
    this.#clearAck();
    this.#sessionTimer.stop();
    this.#deps.forget(this);
    this.onEnd?.(reason);
    if (!this.transport) this.endpoint.close();
    else if (tellMedia) this.transport.end(reason);
  }

  /** Our BYE; `tellMedia` when signalling decided it (no ACK, session expiry, transfer done). */
  async hangUp(reason: string, tellMedia = false): Promise<void> {
    if (this.#state === "ended") return;
    this.end(reason, tellMedia);
    const res = await this.request("BYE", [
      { name: "reason", value: `SIP;cause=200;text="${reason.replace(/"/g, "'")}"` },
    ]);
    this.log.info({ status: res.status, reason }, "sip: we hung up (BYE)");
  }

  /** Sends an in-dialog request through a client transaction; resolves with its final response. */
  request(
    method: string,
    extra: SipHeader[] = [],
    body?: { type: string; content: string },
  ): Promise<SipResponse> {
    const req = this.#inDialog(method, this.#localCseq++, extra);
    const headers = req.headers as SipHeader[];
    let bytes = Buffer.alloc(0);
    if (body) {
      headers.push({ name: "content-type", value: body.type });
      bytes = Buffer.from(body.content);
    }
    return this.#deps.client.send({ ...req, headers, body: bytes }, this.#usableFlow());
  }

  /** A request within the dialog: to the remote target, a new branch, through the route set. */
  #inDialog(method: string, cseq: number, extra: SipHeader[] = []): SipRequest {
    const headers: SipHeader[] = [
      {
        name: "via",
        value: `SIP/2.0/${this.flow.transport} ${this.#address}:${this.#sipPort};branch=${newBranch()};rport`,
      },
      { name: "max-forwards", value: "70" },
      { name: "from", value: this.#localHeader },
      { name: "to", value: this.#remoteHeader },
      { name: "call-id", value: this.callId },
      { name: "cseq", value: `${cseq} ${method}` },
      // Our requests go back on the INVITE's flow, so the route set is written as it came (loose routing).
      ...this.#routes.map((value) => ({ name: "route", value })),
      ...extra,
    ];
    const uri = parseUri(this.#remoteTarget) ? this.#remoteTarget : this.remoteUri;
    return { kind: "request", method, uri, headers, body: Buffer.alloc(0) };
  }

  /**
   * The INVITE's flow while it lasts (it crosses NAT and needs no lookup); once a TCP connection
   * has closed, a new one to the first Route (loose routing) or else the caller's Contact.
   */
  #usableFlow(): SipFlow {
    if (this.flow.usable) return this.flow;
    const next = parseNameAddr(this.#routes[0] ?? "")?.uri ?? this.#remoteTarget;
    const uri = parseUri(next);
    if (!uri?.host) return this.flow;
    const host = uri.host.replace(/^\[|\]$/g, "");
    this.log.info(
      { host, port: uri.port ?? 5060 },
      "sip: the call's TCP connection closed, connecting again",
    );
    this.flow = this.#deps.connect(
      this.flow.transport,
      host,
      uri.port ?? (this.flow.transport === "TLS" ? 5061 : 5060),
    );
    return this.flow;
  }

  /** The call control the media side gets. */
  control(transfer: (target: string) => Promise<void>): SipCallControl {
    return { hangUp: (reason) => this.hangUp(reason), transfer, dtmfInfo: (d, ms) => this.#dtmfInfo(d, ms) };
  }

  /** A keypad digit by INFO, for a call that negotiated no telephone-event. */
  async #dtmfInfo(digit: string, durationMs: number): Promise<void> {
    const content = dtmfRelayBody(digit, durationMs);
    const res = await this.request("INFO", [], { type: "application/dtmf-relay", content });
    if (res.status >= 300)
      throw new Error(`the INFO carrying ${digit} was refused: ${res.status} ${res.reason}`);
  }
}

function sameKeys(a: SrtpKeys | undefined, b: SrtpKeys | undefined): boolean {
  if (!a || !b) return a === b;
  return Buffer.from(a.remoteKey).equals(Buffer.from(b.remoteKey)) && a.tagBits === b.tagBits;
}

export function dialogKey(callId: string, localTag: string, remoteTag: string): string {
  return `${callId}|${localTag}|${remoteTag}`;
}

export function warning(text: string): SipHeader {
  return { name: "warning", value: `399 voice-bridge "${text.replace(/"/g, "'")}"` };
}
