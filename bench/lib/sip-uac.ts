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
  type SipMessage,
  type SipRequest,
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

export async function placeSipCall(opts: SipCallOptions): Promise<SipCallReport> {
  const local = opts.localAddress ?? "127.0.0.1";
  const codec = opts.codec ?? "pcmu";
  const pt = codec === "pcmu" ? 0 : 8;
  const sip = await bound(local);
  const rtpBound = await bindRtpSocket(local, 0);
  const rtp = rtpBound.socket;
  const sipPort = sip.address().port;
  const rtpPort = rtp.address().port;
  const callId = opts.callId ?? `${token()}@${local}`;
  const fromTag = token();
  const uri = `sip:${opts.user ?? "agent"}@${opts.target.address}:${opts.target.port}`;
  const from = `<sip:bench@${local}>;tag=${fromTag}`;
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

  const timers = new CallTimers();
  const later = (ms: number, fn: () => void) => timers.later(ms, fn);
  const cancel = (t: NodeJS.Timeout | undefined) => timers.cancel(t);
  // TLS: every request and response of the call on one connection, cut into messages by length.
  const secure = opts.tls
    ? tlsConnect({ host: opts.target.address, port: opts.target.port, rejectUnauthorized: false })
    : undefined;
  secure?.on("error", (err) => {
    report.error ??= `TLS: ${err.message}`;
    done?.();
  });
  const via = secure ? "TLS" : "UDP";
  const contactParams = secure ? ";transport=tls" : "";
  const send = (text: string, to: { address: string; port: number }) =>
    secure ? secure.write(text) : sip.send(text, to.port, to.address);

  let toValue = "";
  let dialogTarget = opts.target;
  let ack = "";
  let done: (() => void) | undefined;
  const finished = new Promise<void>((r) => {
    done = r;
  });

  // INVITE, retransmitted on Timer A until a response.
  const inviteBranch = `z9hG4bK${token()}`;
  const invite = buildRequest(
    "INVITE",
    uri,
    [
      ["Via", `SIP/2.0/${via} ${local}:${sipPort};branch=${inviteBranch};rport`],
      ["Max-Forwards", "70"],
      ["From", from],
      ["To", `<${uri}>`],
      ["Call-ID", callId],
      ["CSeq", "1 INVITE"],
      ["Contact", `<sip:bench@${local}:${sipPort}${contactParams}>`],
      ["Content-Type", "application/sdp"],
    ],
    offerSdp(local, rtpPort, codec, srtpKey),
  );
  let inviteTimer: NodeJS.Timeout | undefined;
  const retransmitInvite = (interval: number) => {
    inviteTimer = later(interval, () => {
      send(invite, opts.target);
      retransmitInvite(interval * 2);
    });
  };
  const giveUp = later(opts.answerTimeoutMs ?? 64 * T1, () => {
    report.error = "no final response to the INVITE";
    done?.();
  });

  let byeTimer: NodeJS.Timeout | undefined;
  let byeText = "";
  let ended = false;

  const hangUp = () => {
    if (ended) return;
    ended = true;
    report.endedBy = "uac";
    media.stop();
    byeText = buildRequest("BYE", contactUri(dialogTarget), [
      ["Via", `SIP/2.0/${via} ${local}:${sipPort};branch=z9hG4bK${token()};rport`],
      ["Max-Forwards", "70"],
      ["From", from],
      ["To", toValue],
      ["Call-ID", callId],
      ["CSeq", `${++cseq} BYE`],
    ]);
    send(byeText, dialogTarget);
    let interval = T1;
    const again = () => {
      byeTimer = later(interval, () => {
        send(byeText, dialogTarget);
        interval = Math.min(interval * 2, T2);
        again();
      });
    };
    again();
    later(64 * T1, () => {
      report.error ??= "no response to the BYE";
      done?.();
    });
  };

  const onMessage = (buf: Buffer, rinfo: { address: string; port: number }): void => {
    const m = parseSipMessage(buf.toString("utf8"));
    if (!m || header(m, "call-id") !== callId) return;
    if (m.kind === "request") {
      onRequest(m, { address: rinfo.address, port: rinfo.port });
      return;
    }
    const method = header(m, "cseq")?.split(/\s+/)[1];
    if (method === "INVITE") onInviteResponse(m);
    else if (method === "BYE" && m.status >= 200) {
      cancel(byeTimer);
      report.byeStatus = m.status;
      done?.();
    }
  };
  sip.on("message", onMessage);
  if (secure) {
    const framer = new SipStreamFramer();
    secure.on("data", (chunk: Buffer) => {
      for (const ev of framer.push(chunk)) if (ev.type === "message") onMessage(ev.bytes, opts.target);
    });
  }

  function onInviteResponse(m: SipMessage & { kind: "response" }): void {
    cancel(inviteTimer);
    inviteTimer = undefined;
    if (m.status < 200) return;
    if (m.status >= 300) {
      // A non-2xx final response is acknowledged within the INVITE transaction (same branch).
      report.status = m.status;
      send(
        buildRequest("ACK", uri, [
          ["Via", `SIP/2.0/${via} ${local}:${sipPort};branch=${inviteBranch};rport`],
          ["Max-Forwards", "70"],
          ["From", from],
          ["To", header(m, "to") ?? ""],
          ["Call-ID", callId],
          ["CSeq", "1 ACK"],
        ]),
        opts.target,
      );
      report.error = `INVITE answered ${m.status} ${m.reason}`;
      cancel(giveUp);
      done?.();
      return;
    }
    if (ack) {
      // A retransmitted 2xx: our ACK was lost.
      send(ack, dialogTarget);
      return;
    }
    report.status = m.status;
    cancel(giveUp);
    toValue = header(m, "to") ?? "";
    dialogTarget = contactTarget(header(m, "contact")) ?? opts.target;
    ack = buildRequest("ACK", contactUri(dialogTarget), [
      ["Via", `SIP/2.0/${via} ${local}:${sipPort};branch=z9hG4bK${token()};rport`],
      ["Max-Forwards", "70"],
      ["From", from],
      ["To", toValue],
      ["Call-ID", callId],
      ["CSeq", "1 ACK"],
    ]);
    send(ack, dialogTarget);
    const answer = parseSdpAudio(m.body);
    if (!answer || !tagOf(toValue)) {
      report.error = answer ? "2xx without a To tag" : "2xx without an audio m-line";
      hangUp();
      return;
    }
    if (!answer.payloadTypes.includes(pt))
      report.error = `answer did not accept ${codec} (payload types ${answer.payloadTypes.join(" ")})`;
    media.start(answer);
    for (const d of opts.dtmf ?? []) later(d.atMs, () => sendInfo(d.digit));
    later(opts.seconds * 1000, hangUp);
  }

  // A keypad digit as SIP INFO in the dialog (the body format of application/dtmf-relay).
  let cseq = 2;
  function sendInfo(digit: string): void {
    if (ended) return;
    send(
      buildRequest(
        "INFO",
        contactUri(dialogTarget),
        [
          ["Via", `SIP/2.0/UDP ${local}:${sipPort};branch=z9hG4bK${token()};rport`],
          ["Max-Forwards", "70"],
          ["From", from],
          ["To", toValue],
          ["Call-ID", callId],
          ["CSeq", `${++cseq} INFO`],
          ["Content-Type", "application/dtmf-relay"],
        ],
        `Signal=${digit}\r\nDuration=160\r\n`,
      ),
      dialogTarget,
    );
  }

  // Requests are answered where they came from (what rport asks of a UAS, RFC 3581).
  function onRequest(m: SipRequest, to: { address: string; port: number }): void {
    if (m.method === "BYE") {
      send(buildResponse(m, 200, "OK"), to);
      if (!ended) {
        ended = true;
        report.endedBy = "uas";
        media.stop();
        done?.();
      }
      return;
    }
    if (m.method === "ACK") return;
    send(
      buildResponse(m, m.method === "OPTIONS" ? 200 : 501, m.method === "OPTIONS" ? "OK" : "Not Implemented"),
      to,
    );
  }

  send(invite, opts.target);
  retransmitInvite(T1);
  await finished;
  timers.clearAll();
  secure?.destroy();
  await Promise.all([close(sip), close(rtp)]);
  media.finish();
  report.answeredAtEpochMs = performance.timeOrigin + media.answeredAt;
  return report;
}

function contactUri(t: { address: string; port: number }): string {
  return `sip:${t.address}:${t.port}`;
}
