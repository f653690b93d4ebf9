// One benchmark call over SIP (a minimal UAC on UDP): INVITE with an SDP offer (retransmitted
// on Timer A until a response), ACK of the 2xx (again for each retransmitted 2xx), RTP from the
// caller's audio at 20 ms paced from the monotonic clock with catch-up, every received RTP
// packet timed against its real-time schedule (rtp-lateness.ts), then BYE (retransmitted on
// Timer E until answered). A BYE from the far side ends the call early and is answered 200.
// Everything is bounded in time; the report says how the call went instead of throwing.
import { randomBytes } from "node:crypto";
import { connect as tlsConnect } from "node:tls";
import { bindRtpSocket } from "../../bridges/sip/rtp/port-pool.ts";
import { SipStreamFramer } from "../../bridges/sip/stream-framer.ts";
import {
  BenchCallMedia,
  type BenchMediaCounts,
  type BenchMediaOptions,
  bound,
  CallTimers,
  close,
} from "./sip-call-media.ts";
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
  tagOf,
} from "./sip-uac-message.ts";

export interface SipCallOptions {
  /** The bridge's SIP address. */
  target: { address: string; port: number };
  /** Address to bind and advertise (default 127.0.0.1). */
  localAddress?: string;
  /** Request-URI user (default "agent"). */
  user?: string;
  codec?: "pcmu" | "pcma";
  /** What the caller says: mono 8 kHz, sent from the moment the call is answered. */
  caller: Int16Array;
  /** Call length from the answer, s. */
  seconds: number;
  /** Gives up on the INVITE after this long without a final response (default 32 s, Timer B). */
  answerTimeoutMs?: number;
  /** SDES-SRTP (AES_CM_128_HMAC_SHA1_80): the caller's packets are protected; the agent's carry the tag. */
  srtp?: boolean;
  /** Keypad digits sent as SIP INFO (application/dtmf-relay), ms after the answer. */
  dtmf?: Array<{ digit: string; atMs: number }>;
  /**
   * Keep per-packet records (default true). A long run passes false: arrivalsMs and latenessMs
   * come back empty, and `onPacket` hears each agent packet as it arrives instead.
   */
  keep?: boolean;
  /** Each agent packet as it arrives (sip-call-media.ts). */
  onPacket?: BenchMediaOptions["onPacket"];
  /** Signalling over one TLS connection to `target` (the bench's self-signed certificate is not checked). */
  tls?: boolean;
  /** The Call-ID (default a random one at the local address): lets a caller name the call before it ends. */
  callId?: string;
}

export interface SipCallReport extends BenchMediaCounts {
  callId: string;
  /** Final response status to the INVITE (0: none came). */
  status: number;
  /** Who ended the call: "uac" (our BYE), "uas" (their BYE), or undefined if it never started. */
  endedBy?: "uac" | "uas";
  /** Status of the response to our BYE (0: none came, or not sent). */
  byeStatus: number;
  /** Epoch ms of the answer (what arrivalsMs count from); NaN if never answered. */
  answeredAtEpochMs: number;
  error?: string;
}

const T1 = 500;
const T2 = 4000;

/** A call's report before anything happened. */
export function newSipCallReport(callId: string): SipCallReport {
  return {
    callId,
    status: 0,
    byeStatus: 0,
    rtpSent: 0,
    rtpReceived: 0,
    arrivalsMs: [],
    latenessMs: [],
    streams: 0,
    holes: 0,
    holeMs: 0,
    answeredAtEpochMs: Number.NaN,
  };
}

const token = () => randomBytes(6).toString("hex");
const newBranch = () => `z9hG4bK${token()}`;

type Peer = { address: string; port: number };

export async function placeSipCall(opts: SipCallOptions): Promise<SipCallReport> {
  const local = opts.localAddress ?? "127.0.0.1";
  const codec = opts.codec ?? "pcmu";
  const sip = await bound(local);
  const rtpBound = await bindRtpSocket(local, 0);
  const rtp = rtpBound.socket;
  const callId = opts.callId ?? `${token()}@${local}`;
  const report = newSipCallReport(callId);
  // SRTP: our key in the offer (sip-call-media.ts protects our packets with it).
  const srtpKey = opts.srtp ? randomBytes(30) : undefined;
  const media = new BenchCallMedia(
    rtpBound,
    {
      codec,
      caller: opts.caller,
      seconds: opts.seconds,
      srtpKey,
      keep: opts.keep !== false,
      onPacket: opts.onPacket,
    },
    report,
  );

  // TLS: every request and response of the call on one connection, cut into messages by length.
  const secure = opts.tls
    ? tlsConnect({ host: opts.target.address, port: opts.target.port, rejectUnauthorized: false })
    : undefined;
  const dialog = new UacDialog({
    opts,
    local,
    sipPort: sip.address().port,
    callId,
    codec,
    offer: offerSdp(local, rtp.address().port, codec, srtpKey),
    transport: secure ? "TLS" : "UDP",
    send: (text, to) => {
      if (secure) secure.write(text);
      else sip.send(text, to.port, to.address);
    },
    report,
    media,
  });
  secure?.on("error", (err) => dialog.fail(`TLS: ${err.message}`));
  sip.on("message", (buf, rinfo) => dialog.onMessage(buf, { address: rinfo.address, port: rinfo.port }));
  if (secure) {
    const framer = new SipStreamFramer();
    secure.on("data", (chunk: Buffer) => {
      for (const ev of framer.push(chunk)) if (ev.type === "message") dialog.onMessage(ev.bytes, opts.target);
    });
  }

  await dialog.run();
  secure?.destroy();
  await Promise.all([close(sip), close(rtp)]);
  media.finish();
  report.answeredAtEpochMs = performance.timeOrigin + media.answeredAt;
  return report;
}

interface UacDialogOptions {
  opts: SipCallOptions;
  local: string;
  sipPort: number;
  callId: string;
  codec: "pcmu" | "pcma";
  /** The INVITE's SDP offer. */
  offer: string;
  /** How our requests travel (their Via). */
  transport: "UDP" | "TLS";
  send: (text: string, to: Peer) => void;
  report: SipCallReport;
  media: BenchCallMedia;
}

/**
 * The signalling of one call: the INVITE transaction, the dialog its 2xx opens (ACK, keypad INFOs,
 * our BYE) and the far side's requests. Every step is bounded by a timer; `run` resolves when the
 * call is over, whoever or whatever ended it.
 */
class UacDialog {
  readonly #o: UacDialogOptions;
  readonly #timers = new CallTimers();
  readonly #uri: string;
  readonly #from: string;
  readonly #inviteBranch = newBranch();
  readonly #invite: string;
  readonly #finished: Promise<void>;
  #done: () => void = () => {};
  #inviteTimer: NodeJS.Timeout | undefined;
  #giveUp: NodeJS.Timeout | undefined;
  #byeTimer: NodeJS.Timeout | undefined;
  /** The dialog: the 2xx's To (with its tag), where its Contact says to send, our ACK of it. */
  #toValue = "";
  #dialogTarget: Peer;
  #ack = "";
  #cseq = 2;
  #ended = false;

  constructor(o: UacDialogOptions) {
    this.#o = o;
    this.#dialogTarget = o.opts.target;
    this.#uri = `sip:${o.opts.user ?? "agent"}@${o.opts.target.address}:${o.opts.target.port}`;
    this.#from = `<sip:bench@${o.local}>;tag=${token()}`;
    this.#finished = new Promise<void>((r) => {
      this.#done = r;
    });
    const contactParams = o.transport === "TLS" ? ";transport=tls" : "";
    this.#invite = buildRequest(
      "INVITE",
      this.#uri,
      [
        ["Via", this.#via(this.#inviteBranch)],
        ["Max-Forwards", "70"],
        ["From", this.#from],
        ["To", `<${this.#uri}>`],
        ["Call-ID", o.callId],
        ["CSeq", "1 INVITE"],
        ["Contact", `<sip:bench@${o.local}:${o.sipPort}${contactParams}>`],
        ["Content-Type", "application/sdp"],
      ],
      o.offer,
    );
  }

  /** Places the call; resolves when it is over, its timers cleared. */
  async run(): Promise<void> {
    this.#giveUp = this.#timers.later(this.#o.opts.answerTimeoutMs ?? 64 * T1, () => {
      this.#o.report.error = "no final response to the INVITE";
      this.#done();
    });
    this.#o.send(this.#invite, this.#o.opts.target);
    this.#retransmitInvite(T1);
    await this.#finished;
    this.#timers.clearAll();
  }

  /** The call ends on an error of the connection (the first error is the one reported). */
  fail(error: string): void {
    this.#o.report.error ??= error;
    this.#done();
  }

  /** A message from the far side; `from` is where it came from. */
  onMessage(buf: Buffer, from: Peer): void {
    const m = parseSipMessage(buf.toString("utf8"));
    if (!m || header(m, "call-id") !== this.#o.callId) return;
    if (m.kind === "request") {
      this.#onRequest(m, from);
      return;
    }
    const method = header(m, "cseq")?.split(/\s+/)[1];
    if (method === "INVITE") this.#onInviteResponse(m);
    else if (method === "BYE" && m.status >= 200) {
      this.#timers.cancel(this.#byeTimer);
      this.#o.report.byeStatus = m.status;
      this.#done();
    }
  }

  #via(branch: string, transport: string = this.#o.transport): string {
    return `SIP/2.0/${transport} ${this.#o.local}:${this.#o.sipPort};branch=${branch};rport`;
  }

  /** A request in the dialog, to the 2xx's Contact, in a transaction of its own. */
  #inDialog(
    method: string,
    cseq: string,
    via = this.#via(newBranch()),
    more: Array<[string, string]> = [],
    body = "",
  ): string {
    return buildRequest(
      method,
      contactUri(this.#dialogTarget),
      [
        ["Via", via],
        ["Max-Forwards", "70"],
        ["From", this.#from],
        ["To", this.#toValue],
        ["Call-ID", this.#o.callId],
        ["CSeq", cseq],
        ...more,
      ],
      body,
    );
  }

  // INVITE, retransmitted on Timer A until a response.
  #retransmitInvite(interval: number): void {
    this.#inviteTimer = this.#timers.later(interval, () => {
      this.#o.send(this.#invite, this.#o.opts.target);
      this.#retransmitInvite(interval * 2);
    });
  }

  #onInviteResponse(m: SipResponse): void {
    this.#timers.cancel(this.#inviteTimer);
    this.#inviteTimer = undefined;
    if (m.status < 200) return;
    if (m.status >= 300) this.#refused(m);
    // A retransmitted 2xx: our ACK was lost.
    else if (this.#ack) this.#o.send(this.#ack, this.#dialogTarget);
    else this.#answered(m);
  }

  /** A non-2xx final response is acknowledged within the INVITE transaction (same branch). */
  #refused(m: SipResponse): void {
    const { report } = this.#o;
    report.status = m.status;
    this.#o.send(
      buildRequest("ACK", this.#uri, [
        ["Via", this.#via(this.#inviteBranch)],
        ["Max-Forwards", "70"],
        ["From", this.#from],
        ["To", header(m, "to") ?? ""],
        ["Call-ID", this.#o.callId],
        ["CSeq", "1 ACK"],
      ]),
      this.#o.opts.target,
    );
    report.error = `INVITE answered ${m.status} ${m.reason}`;
    this.#timers.cancel(this.#giveUp);
    this.#done();
  }

  /** The 2xx: ACK it, start the media and the keypad digits, and hang up when the call's time is up. */
  #answered(m: SipResponse): void {
    const { report, opts, codec } = this.#o;
    report.status = m.status;
    this.#timers.cancel(this.#giveUp);
    this.#toValue = header(m, "to") ?? "";
    this.#dialogTarget = contactTarget(header(m, "contact")) ?? opts.target;
    this.#ack = this.#inDialog("ACK", "1 ACK");
    this.#o.send(this.#ack, this.#dialogTarget);
    const answer = parseSdpAudio(m.body);
    if (!answer || !tagOf(this.#toValue)) {
      report.error = answer ? "2xx without a To tag" : "2xx without an audio m-line";
      this.#hangUp();
      return;
    }
    const pt = codec === "pcmu" ? 0 : 8;
    if (!answer.payloadTypes.includes(pt))
      report.error = `answer did not accept ${codec} (payload types ${answer.payloadTypes.join(" ")})`;
    this.#o.media.start(answer);
    for (const d of opts.dtmf ?? []) this.#timers.later(d.atMs, () => this.#sendInfo(d.digit));
    this.#timers.later(opts.seconds * 1000, () => this.#hangUp());
  }

  /** Our BYE, retransmitted on Timer E (T1 doubling up to T2) until answered, for up to 64·T1. */
  #hangUp(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#o.report.endedBy = "uac";
    this.#o.media.stop();
    const bye = this.#inDialog("BYE", `${++this.#cseq} BYE`);
    this.#o.send(bye, this.#dialogTarget);
    let interval = T1;
    const again = () => {
      this.#byeTimer = this.#timers.later(interval, () => {
        this.#o.send(bye, this.#dialogTarget);
        interval = Math.min(interval * 2, T2);
        again();
      });
    };
    again();
    this.#timers.later(64 * T1, () => this.fail("no response to the BYE"));
  }

  // A keypad digit as SIP INFO in the dialog (the body format of application/dtmf-relay).
  #sendInfo(digit: string): void {
    if (this.#ended) return;
    const info = this.#inDialog(
      "INFO",
      `${++this.#cseq} INFO`,
      this.#via(newBranch(), "UDP"),
      [["Content-Type", "application/dtmf-relay"]],
      `Signal=${digit}\r\nDuration=160\r\n`,
    );
    this.#o.send(info, this.#dialogTarget);
  }

  // Requests are answered where they came from (what rport asks of a UAS, RFC 3581).
  #onRequest(m: SipRequest, to: Peer): void {
    if (m.method === "BYE") {
      this.#o.send(buildResponse(m, 200, "OK"), to);
      if (!this.#ended) {
        this.#ended = true;
        this.#o.report.endedBy = "uas";
        this.#o.media.stop();
        this.#done();
      }
      return;
    }
    if (m.method === "ACK") return;
    const options = m.method === "OPTIONS";
    this.#o.send(buildResponse(m, options ? 200 : 501, options ? "OK" : "Not Implemented"), to);
  }
}

function contactUri(t: Peer): string {
  return `sip:${t.address}:${t.port}`;
}
