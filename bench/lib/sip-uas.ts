// The callee side of benchmark calls the bridge places (`calls --transport sip --outbound`): one
// UDP socket standing in for the trunk and every phone behind it. An INVITE is answered at once
// with 200 OK and an SDP answer for its first offered G.711 codec (retransmitted on T1 doubling
// until the ACK), the callee's audio goes out from the answer on and the agent's packets are
// timed (sip-call-media.ts, as for the calls the benchmark places itself), then after `seconds`
// the callee hangs up (BYE, retransmitted until answered). A BYE from the bridge ends the call
// early and is answered 200. Everything is bounded in time; the report says how it went.
import { randomBytes } from "node:crypto";
import type dgram from "node:dgram";
import { bindRtpSocket } from "../../bridges/sip/rtp/port-pool.ts";
import { BenchCallMedia, bound, CallTimers, close } from "./sip-call-media.ts";
import { newSipCallReport, type SipCallReport } from "./sip-uac.ts";
import {
  buildRequest,
  buildResponse,
  contactTarget,
  header,
  offerSdp,
  parseSdpAudio,
  parseSipMessage,
  type SipRequest,
} from "./sip-uac-message.ts";

export interface AnswerOptions {
  /** What the callee says: mono 8 kHz, from the answer on. */
  caller: Int16Array;
  /** Call length from the answer, s; the callee hangs up then. */
  seconds: number;
  /** Keep per-packet records (default true). */
  keep?: boolean;
  /** Longest wait for the INVITE, ms (default 30 s). */
  inviteTimeoutMs?: number;
}

interface Dialog {
  readonly invite: SipRequest;
  readonly from: { address: string; port: number };
  onRequest?: (m: SipRequest, from: { address: string; port: number }) => void;
  onResponse?: (m: { status: number; cseq: string }) => void;
}

const T1 = 500;
const T2 = 4000;
const token = () => randomBytes(6).toString("hex");

export class BenchUas {
  readonly #sip: dgram.Socket;
  readonly #local: string;
  /** INVITEs by Call-ID, and who waits for which. */
  readonly #dialogs = new Map<string, Dialog>();
  readonly #waiting = new Map<string, (d: Dialog) => void>();

  private constructor(sip: dgram.Socket, local: string) {
    this.#sip = sip;
    this.#local = local;
    sip.on("message", (buf, rinfo) => this.#message(buf, { address: rinfo.address, port: rinfo.port }));
  }

  /** Listens on `port` (0: any free one). */
  static async listen(port: number, local = "127.0.0.1"): Promise<BenchUas> {
    return new BenchUas(await bound(local, port), local);
  }

  get port(): number {
    return this.#sip.address().port;
  }

  close(): Promise<void> {
    return close(this.#sip);
  }

  #message(buf: Buffer, from: { address: string; port: number }): void {
    const m = parseSipMessage(buf.toString("utf8"));
    if (!m) return;
    const callId = header(m, "call-id") ?? "";
    const d = this.#dialogs.get(callId);
    if (m.kind === "response") {
      d?.onResponse?.({ status: m.status, cseq: header(m, "cseq") ?? "" });
      return;
    }
    if (d) {
      d.onRequest?.(m, from);
      return;
    }
    if (m.method === "INVITE") {
      const dialog: Dialog = { invite: m, from };
      this.#dialogs.set(callId, dialog);
      const waiter = this.#waiting.get(callId);
      this.#waiting.delete(callId);
      waiter?.(dialog);
      return;
    }
    if (m.method !== "ACK")
      this.#sip.send(buildResponse(m, 481, "Call Does Not Exist"), from.port, from.address);
  }

  /** Answers the bridge's INVITE for `callId` (come already or still to come) and runs the call. */
  async answer(callId: string, opts: AnswerOptions): Promise<SipCallReport> {
    const report = newSipCallReport(callId);
    const dialog = await new Promise<Dialog | undefined>((resolve) => {
      const known = this.#dialogs.get(callId);
      if (known) return resolve(known);
      const timer = setTimeout(() => {
        this.#waiting.delete(callId);
        resolve(undefined);
      }, opts.inviteTimeoutMs ?? 30_000);
      this.#waiting.set(callId, (d) => {
        clearTimeout(timer);
        resolve(d);
      });
    });
    if (!dialog) {
      report.error = "no INVITE from the bridge";
      return report;
    }
    try {
      await this.#run(dialog, opts, report);
    } finally {
      this.#dialogs.delete(callId);
    }
    return report;
  }

  async #run(d: Dialog, opts: AnswerOptions, report: SipCallReport): Promise<void> {
    const invite = d.invite;
    const offer = parseSdpAudio(invite.body);
    const codec = offer?.payloadTypes.includes(0)
      ? "pcmu"
      : offer?.payloadTypes.includes(8)
        ? "pcma"
        : undefined;
    if (!offer || !codec) {
      this.#send(buildResponse(invite, 488, "Not Acceptable Here", token()), d.from);
      report.error = "the bridge offered no G.711";
      return;
    }
    const rtpBound = await bindRtpSocket(this.#local, 0);
    const rtp = rtpBound.socket;
    const media = new BenchCallMedia(
      rtpBound,
      { codec, caller: opts.caller, seconds: opts.seconds, keep: opts.keep !== false },
      report,
    );
    const toTag = token();
    const sipPort = this.port;
    const ok = buildResponse(invite, 200, "OK", toTag, {
      headers: [
        ["Contact", `<sip:callee@${this.#local}:${sipPort}>`],
        ["Content-Type", "application/sdp"],
      ],
      body: offerSdp(this.#local, rtp.address().port, codec),
    });
    const timers = new CallTimers();
    const later = (ms: number, fn: () => void) => timers.later(ms, fn);
    let done: () => void = () => {};
    const finished = new Promise<void>((r) => {
      done = r;
    });
    let acked = false;
    let ended = false;
    let byeTimer: NodeJS.Timeout | undefined;
    // The 2xx until its ACK (T1 doubling to T2), as a UAS core must (RFC 3261 §13.3.1.4).
    const resend = (interval: number) =>
      later(interval, () => {
        if (acked || ended) return;
        this.#send(ok, d.from);
        resend(Math.min(interval * 2, T2));
      });
    this.#send(ok, d.from);
    resend(T1);
    report.status = 200;
    media.start(offer);
    const bridgeTarget = contactTarget(header(invite, "contact")) ?? d.from;
    const hangUp = () => {
      if (ended) return;
      ended = true;
      report.endedBy = "uas";
      media.stop();
      // From our side: From is the INVITE's To with our tag, To is the INVITE's From.
      const bye = buildRequest("BYE", `sip:${bridgeTarget.address}:${bridgeTarget.port}`, [
        ["Via", `SIP/2.0/UDP ${this.#local}:${sipPort};branch=z9hG4bK${token()};rport`],
        ["Max-Forwards", "70"],
        ["From", `${header(invite, "to") ?? ""};tag=${toTag}`],
        ["To", header(invite, "from") ?? ""],
        ["Call-ID", report.callId],
        ["CSeq", "1 BYE"],
      ]);
      let interval = T1;
      this.#send(bye, bridgeTarget);
      const again = () => {
        byeTimer = later(interval, () => {
          this.#send(bye, bridgeTarget);
          interval = Math.min(interval * 2, T2);
          again();
        });
      };
      again();
      later(64 * T1, () => {
        report.error ??= "no response to the BYE";
        done();
      });
    };
    d.onResponse = (r) => {
      if (!/\bBYE$/.test(r.cseq) || r.status < 200) return;
      timers.cancel(byeTimer);
      report.byeStatus = r.status;
      done();
    };
    d.onRequest = (m, from) => {
      if (m.method === "ACK") {
        acked = true;
        return;
      }
      if (m.method === "INVITE") {
        this.#send(ok, from); // a retransmitted INVITE: the same answer
        return;
      }
      if (m.method === "BYE") {
        this.#send(buildResponse(m, 200, "OK"), from);
        if (!ended) {
          ended = true;
          report.endedBy = "uac";
          media.stop();
          done();
        }
        return;
      }
      this.#send(
        buildResponse(
          m,
          m.method === "OPTIONS" ? 200 : 501,
          m.method === "OPTIONS" ? "OK" : "Not Implemented",
        ),
        from,
      );
    };
    later(opts.seconds * 1000, hangUp);
    await finished;
    timers.clearAll();
    media.finish();
    report.answeredAtEpochMs = performance.timeOrigin + media.answeredAt;
    await close(rtp);
  }

  #send(text: string, to: { address: string; port: number }): void {
    this.#sip.send(text, to.port, to.address);
  }
}
