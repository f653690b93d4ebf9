// A UAS core on virtual time with scripted peers: requests are written as text, every message the
// core sends is parsed back and stamped with the virtual time it left at.
import { vi } from "vitest";
import type { SignallingConfig } from "../../../bridges/sip/core-options.ts";
import type { SipFlow } from "../../../bridges/sip/flow.ts";
import { header, type SipMessage, type SipRequest, type SipResponse } from "../../../bridges/sip/message.ts";
import { parseMessage } from "../../../bridges/sip/parse.ts";
import { SipCore } from "../../../bridges/sip/server.ts";
import { DEFAULT_TIMERS } from "../../../bridges/sip/transaction.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { TestRtpPortPool, testTransportFactory } from "./test-media.ts";

export const OFFER = [
  "v=0",
  "o=- 1 1 IN IP4 192.0.2.9",
  "s=-",
  "c=IN IP4 192.0.2.9",
  "t=0 0",
  "m=audio 4000 RTP/AVP 0 101",
  "a=rtpmap:101 telephone-event/8000",
  "",
].join("\r\n");

export interface ReqOpts {
  callId?: string;
  fromTag?: string;
  toTag?: string;
  cseq?: number;
  branch?: string;
  body?: string;
  /** Of the body (default application/sdp). */
  contentType?: string;
  extra?: string[];
  uri?: string;
  contact?: string;
}

let branchN = 0;

/** A request as a peer would write it (compact-free, Content-Length computed). */
export function request(method: string, o: ReqOpts = {}): Buffer {
  const body = o.body ?? "";
  const lines = [
    `${method} ${o.uri ?? "sip:agent@192.0.2.1"} SIP/2.0`,
    `Via: SIP/2.0/UDP 192.0.2.9:5070;branch=${o.branch ?? `z9hG4bKr${++branchN}`};rport`,
    `From: "Caller" <sip:+15550001@carrier.example>;tag=${o.fromTag ?? "peer"}`,
    `To: <sip:agent@192.0.2.1>${o.toTag ? `;tag=${o.toTag}` : ""}`,
    `Call-ID: ${o.callId ?? "call-1"}`,
    `CSeq: ${o.cseq ?? 1} ${method}`,
    `Contact: <${o.contact ?? "sip:caller@192.0.2.9:5070"}>`,
    "Max-Forwards: 70",
    ...(o.extra ?? []),
    ...(body ? [`Content-Type: ${o.contentType ?? "application/sdp"}`] : []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    body,
  ];
  return Buffer.from(lines.join("\r\n"));
}

export interface Sent {
  at: number;
  msg: SipMessage;
}

export function coreRig(opts: { reliable?: boolean; sip?: Partial<SignallingConfig> } = {}) {
  const clock = new VirtualClock();
  const pool = new TestRtpPortPool();
  const media = testTransportFactory();
  const sent: Sent[] = [];
  const core = new SipCore({
    config: {
      port: 5060,
      host: "192.0.2.1",
      codecs: ["opus", "pcmu", "pcma"],
      mediaTimeoutS: 30,
      // The scripted peers speak from TEST-NET-1, a public range: the default allow-list refuses it.
      allowFrom: ["192.0.2.0/24"],
      ...opts.sip,
    },
    log: silentLogger,
    clock,
    timers: DEFAULT_TIMERS,
    ports: pool,
    createTransport: media.create,
    onCall: () => {},
    retryAfterS: 30,
    listenPort: () => 5060,
    connect: () => {
      throw new Error("the core rig's flow never closes");
    },
  });
  const flow: SipFlow = {
    transport: opts.reliable ? "TCP" : "UDP",
    remote: { address: "192.0.2.9", port: 5070 },
    local: { address: "192.0.2.1", port: 5060 },
    reliable: opts.reliable ?? false,
    usable: true,
    send: (bytes) => {
      const r = parseMessage(bytes);
      if (!r.ok) throw new Error(`core sent an unparsable message: ${r.error}`);
      sent.push({ at: clock.now(), msg: r.msg });
    },
  };
  const send = (bytes: Buffer): void => core.receive(bytes, flow);
  const responses = (status?: number, method?: string): (Sent & { msg: SipResponse })[] =>
    sent.filter(
      (s): s is Sent & { msg: SipResponse } =>
        s.msg.kind === "response" &&
        (status === undefined || s.msg.status === status) &&
        (method === undefined || (header(s.msg, "cseq") ?? "").endsWith(method)),
    );
  const requests = (method: string): (Sent & { msg: SipRequest })[] =>
    sent.filter((s): s is Sent & { msg: SipRequest } => s.msg.kind === "request" && s.msg.method === method);
  /** Sends an INVITE and waits (real time: the RTP port is a real socket) for the 200. */
  const call = async (o: ReqOpts = {}): Promise<{ toTag: string; ok: SipResponse }> => {
    send(request("INVITE", { body: OFFER, ...o }));
    await vi.waitFor(() => {
      if (!responses(200, "INVITE").some((s) => header(s.msg, "call-id") === (o.callId ?? "call-1")))
        throw new Error("no 200 yet");
    });
    const ok = responses(200, "INVITE").find((s) => header(s.msg, "call-id") === (o.callId ?? "call-1"))!.msg;
    const toTag = /;tag=([^;]+)/.exec(header(ok, "to") ?? "")![1]!;
    return { toTag, ok };
  };
  return { clock, pool, media, core, sent, send, responses, requests, call, flow };
}

/** A response to one of the core's requests, as the peer would send it. */
export function answer(
  req: SipRequest,
  status: number,
  reason: string,
  extra: string[] = [],
  body = "",
): Buffer {
  const copy = req.headers.filter((h) => ["via", "from", "to", "call-id", "cseq"].includes(h.name));
  const lines = [
    `SIP/2.0 ${status} ${reason}`,
    ...copy.map((h) => `${h.name}: ${h.value}`),
    ...extra,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "",
    body,
  ];
  return Buffer.from(lines.join("\r\n"));
}
