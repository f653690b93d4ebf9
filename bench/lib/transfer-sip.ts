// SIP signalling for `bench transfer`: one UDP socket that places calls (the callers, to the
// bridge) or answers them (the persons, as the trunk the bridge's outbound proxy names). Just the
// RFC 3261 steps a two-party call needs: INVITE retransmitted on Timer A until a response, ACK of
// the 2xx (again for a retransmitted 2xx), our 2xx retransmitted until its ACK, BYE either way
// (ours retransmitted until answered), other in-dialog requests answered 200. The media is the
// caller's business (transfer-party.ts): an INVITE or answer carries the SDP it is given.
import { randomBytes } from "node:crypto";
import type dgram from "node:dgram";
import { bound, close } from "./sip-call-media.ts";
import {
  buildRequest,
  buildResponse,
  contactTarget,
  header,
  offerSdp,
  parseSdpAudio,
  parseSipMessage,
  type SipRequest,
  type SipResponse,
} from "./sip-uac-message.ts";

type Peer = { address: string; port: number };

/** Where the other side wants its RTP, and its telephone-event payload type (8 kHz), if any. */
export interface RemoteMedia {
  address: string;
  port: number;
  eventPt: number | undefined;
  payloadTypes: number[];
}

export function remoteMedia(sdp: string): RemoteMedia | undefined {
  const a = parseSdpAudio(sdp);
  if (!a) return undefined;
  const ev = /^a=rtpmap:(\d+) telephone-event\/8000/im.exec(sdp);
  return {
    address: a.address,
    port: a.port,
    payloadTypes: a.payloadTypes,
    eventPt: ev ? Number(ev[1]) : undefined,
  };
}

/** A PCMU offer or answer, with telephone-event on `eventPt`. */
export function pcmuSdp(address: string, port: number, eventPt = 101): string {
  return offerSdp(address, port, "pcmu", undefined, eventPt);
}

const T1 = 500;
const T2 = 4000;
const token = () => randomBytes(6).toString("hex");

/** An established call, whichever side placed it. */
export interface SipCall {
  readonly callId: string;
  readonly remote: RemoteMedia;
  /** Resolves when the call is over: "us" (our BYE answered or given up), "them" (their BYE). */
  readonly ended: Promise<"us" | "them">;
  hangUp(): Promise<void>;
}

/** A call offered to us: who it is for (the Request-URI's user) and the caller's media. */
export interface Offer {
  readonly user: string;
  readonly remote: RemoteMedia;
}

interface Dialog {
  readonly callId: string;
  /** Our From (UAC) or To (UAS) value with our tag, and theirs. */
  readonly us: string;
  them: string;
  /** Where in-dialog requests go: their Contact. */
  target: Peer;
  cseq: number;
  /** UAS: our 2xx until acknowledged; UAC: our ACK, sent again for a retransmitted 2xx. */
  ok?: string;
  ack?: string;
  acked: boolean;
  /** Our SDP (UAS), for a re-INVITE's answer. */
  sdp?: string;
  over: boolean;
  end: (by: "us" | "them") => void;
  ended: Promise<"us" | "them">;
  inviteResponse?: (m: SipResponse) => void;
  byeAnswered?: () => void;
}

export class SipEndpoint {
  readonly #sip: dgram.Socket;
  readonly #local: string;
  readonly #dialogs = new Map<string, Dialog>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Answers an offered call with our SDP, or undefined to refuse it (486). */
  onOffer: ((offer: Offer) => Promise<{ sdp: string; call: (c: SipCall) => void } | undefined>) | undefined;

  private constructor(sip: dgram.Socket, local: string) {
    this.#sip = sip;
    this.#local = local;
    sip.on("message", (buf, rinfo) => this.#message(buf, { address: rinfo.address, port: rinfo.port }));
  }

  static async open(port = 0, local = "127.0.0.1"): Promise<SipEndpoint> {
    return new SipEndpoint(await bound(local, port), local);
  }

  get port(): number {
    return this.#sip.address().port;
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    await close(this.#sip);
  }

  /** Places a call to `user` at `target` with our SDP; rejects on a refusal or no answer in 32 s. */
  invite(target: Peer, user: string, sdp: string): Promise<SipCall> {
    const callId = `${token()}@${this.#local}`;
    const uri = `sip:${user}@${target.address}:${target.port}`;
    const branch = `z9hG4bK${token()}`;
    const from = `<sip:bench@${this.#local}>;tag=${token()}`;
    const via = this.#via(branch);
    const invite = buildRequest(
      "INVITE",
      uri,
      [
        ["Via", via],
        ["Max-Forwards", "70"],
        ["From", from],
        ["To", `<${uri}>`],
        ["Call-ID", callId],
        ["CSeq", "1 INVITE"],
        ["Contact", `<sip:bench@${this.#local}:${this.port}>`],
        ["Content-Type", "application/sdp"],
      ],
      sdp,
    );
    return new Promise<SipCall>((resolve, reject) => {
      const d = this.#dialog(callId, from, `<${uri}>`, target, 1);
      let answered = false;
      const giveUp = this.#later(64 * T1, () => {
        this.#dialogs.delete(callId);
        reject(new Error(`INVITE ${user}: no final response`));
      });
      let again: NodeJS.Timeout | undefined;
      const resend = (interval: number) => {
        again = this.#later(interval, () => {
          this.#send(invite, target);
          resend(Math.min(interval * 2, T2));
        });
      };
      d.inviteResponse = (m) => {
        this.#cancel(again);
        if (m.status < 200) return;
        this.#cancel(giveUp);
        if (m.status >= 300) {
          // A non-2xx is acknowledged in the INVITE transaction (its branch).
          this.#send(
            buildRequest("ACK", uri, [
              ["Via", via],
              ["Max-Forwards", "70"],
              ["From", from],
              ["To", header(m, "to") ?? ""],
              ["Call-ID", callId],
              ["CSeq", "1 ACK"],
            ]),
            target,
          );
          this.#dialogs.delete(callId);
          reject(new Error(`INVITE ${user}: ${m.status} ${m.reason}`));
          return;
        }
        if (answered) {
          if (d.ack) this.#send(d.ack, d.target);
          return;
        }
        answered = true;
        d.them = header(m, "to") ?? "";
        d.target = contactTarget(header(m, "contact")) ?? target;
        d.ack = this.#inDialog(d, "ACK", "1 ACK");
        this.#send(d.ack, d.target);
        const remote = remoteMedia(m.body);
        if (!remote) {
          void this.#bye(d);
          reject(new Error(`INVITE ${user}: 2xx without an audio m-line`));
          return;
        }
        resolve(this.#call(d, remote));
      };
      this.#send(invite, target);
      resend(T1);
    });
  }

  #dialog(callId: string, us: string, them: string, target: Peer, cseq: number): Dialog {
    let end: (by: "us" | "them") => void = () => {};
    const ended = new Promise<"us" | "them">((r) => {
      end = r;
    });
    const d: Dialog = { callId, us, them, target, cseq, acked: false, over: false, end, ended };
    this.#dialogs.set(callId, d);
    return d;
  }

  #call(d: Dialog, remote: RemoteMedia): SipCall {
    return { callId: d.callId, remote, ended: d.ended, hangUp: () => this.#bye(d) };
  }

  /** Our BYE, retransmitted on Timer E until answered, for up to 64·T1. */
  #bye(d: Dialog): Promise<void> {
    if (d.over) return d.ended.then(() => undefined);
    d.over = true;
    const bye = this.#inDialog(d, "BYE", `${++d.cseq} BYE`);
    let again: NodeJS.Timeout | undefined;
    const finish = () => {
      this.#cancel(again);
      this.#cancel(giveUp);
      this.#dialogs.delete(d.callId);
      d.end("us");
    };
    const giveUp = this.#later(64 * T1, finish);
    d.byeAnswered = finish;
    const resend = (interval: number) => {
      again = this.#later(interval, () => {
        this.#send(bye, d.target);
        resend(Math.min(interval * 2, T2));
      });
    };
    this.#send(bye, d.target);
    resend(T1);
    return d.ended.then(() => undefined);
  }

  #message(buf: Buffer, from: Peer): void {
    const m = parseSipMessage(buf.toString("utf8"));
    if (!m) return;
    const callId = header(m, "call-id") ?? "";
    const d = this.#dialogs.get(callId);
    if (m.kind === "response") {
      const method = header(m, "cseq")?.split(/\s+/)[1];
      if (method === "INVITE") d?.inviteResponse?.(m);
      else if (method === "BYE" && m.status >= 200) d?.byeAnswered?.();
      return;
    }
    if (m.method === "ACK") {
      if (d) d.acked = true;
      return;
    }
    if (m.method === "INVITE" && !d) {
      void this.#offered(m, from);
      return;
    }
    if (!d) {
      this.#send(buildResponse(m, 481, "Call/Transaction Does Not Exist"), from);
      return;
    }
    if (m.method === "INVITE") {
      // A retransmission of the INVITE we answer: the same 2xx; a re-INVITE: our SDP again.
      if (!d.ok || !d.sdp) return;
      if (header(m, "cseq") === header(parseSipMessage(d.ok)!, "cseq")) this.#send(d.ok, from);
      else
        this.#send(
          buildResponse(m, 200, "OK", undefined, {
            headers: [
              ["Contact", `<sip:person@${this.#local}:${this.port}>`],
              ["Content-Type", "application/sdp"],
            ],
            body: d.sdp,
          }),
          from,
        );
      return;
    }
    this.#send(buildResponse(m, 200, "OK"), from);
    if (m.method === "BYE" && !d.over) {
      d.over = true;
      this.#dialogs.delete(callId);
      d.end("them");
    }
  }

  async #offered(invite: SipRequest, from: Peer): Promise<void> {
    const callId = header(invite, "call-id") ?? "";
    const toTag = token();
    const us = `${header(invite, "to") ?? ""};tag=${toTag}`;
    const d = this.#dialog(callId, us, header(invite, "from") ?? "", from, 0);
    d.target = contactTarget(header(invite, "contact")) ?? from;
    this.#send(buildResponse(invite, 100, "Trying"), from);
    const remote = remoteMedia(invite.body);
    const user = /^sips?:([^@;>]+)@/i.exec(invite.uri)?.[1] ?? "";
    const answer =
      remote && this.onOffer ? await this.onOffer({ user, remote }).catch(() => undefined) : undefined;
    if (!answer || !remote) {
      this.#dialogs.delete(callId);
      this.#send(buildResponse(invite, 486, "Busy Here", toTag), from);
      return;
    }
    d.sdp = answer.sdp;
    d.ok = buildResponse(invite, 200, "OK", toTag, {
      headers: [
        ["Contact", `<sip:person@${this.#local}:${this.port}>`],
        ["Content-Type", "application/sdp"],
      ],
      body: answer.sdp,
    });
    // The 2xx until its ACK (T1 doubling to T2), as a UAS core must (RFC 3261 §13.3.1.4).
    const resend = (interval: number) =>
      this.#later(interval, () => {
        if (d.acked || d.over) return;
        this.#send(d.ok!, from);
        resend(Math.min(interval * 2, T2));
      });
    this.#send(d.ok, from);
    resend(T1);
    answer.call(this.#call(d, remote));
  }

  /** A request in the dialog, in a transaction of its own. */
  #inDialog(d: Dialog, method: string, cseq: string): string {
    const uri = `sip:${d.target.address}:${d.target.port}`;
    return buildRequest(method, uri, [
      ["Via", this.#via(`z9hG4bK${token()}`)],
      ["Max-Forwards", "70"],
      ["From", d.us],
      ["To", d.them],
      ["Call-ID", d.callId],
      ["CSeq", cseq],
    ]);
  }

  #via(branch: string): string {
    return `SIP/2.0/UDP ${this.#local}:${this.port};branch=${branch};rport`;
  }

  #later(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
    return t;
  }

  #cancel(t: NodeJS.Timeout | undefined): void {
    if (!t) return;
    clearTimeout(t);
    this.#timers.delete(t);
  }

  #send(text: string, to: Peer): void {
    this.#sip.send(text, to.port, to.address);
  }
}
