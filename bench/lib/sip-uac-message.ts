// SIP messages for the benchmark's load generator (a minimal UAC, RFC 3261): requests built as
// text, any message parsed into start line, headers and body, and the SDP offer/answer parts a
// caller needs (where to send RTP, which payload types). Not a SIP stack: just enough to place
// calls on a bridge and hang them up.

export interface SipResponse {
  kind: "response";
  status: number;
  reason: string;
  headers: Map<string, string[]>;
  body: string;
}

export interface SipRequest {
  kind: "request";
  method: string;
  uri: string;
  headers: Map<string, string[]>;
  body: string;
}

export type SipMessage = SipResponse | SipRequest;

/** Compact header forms (RFC 3261 §7.3.3) → full names, lowercase. */
const COMPACT: Record<string, string> = {
  v: "via",
  f: "from",
  t: "to",
  i: "call-id",
  m: "contact",
  l: "content-length",
  c: "content-type",
};

/** Parses one datagram; undefined when it is not a SIP message. */
export function parseSipMessage(text: string): SipMessage | undefined {
  const split = text.indexOf("\r\n\r\n");
  const head = split < 0 ? text : text.slice(0, split);
  const rest = split < 0 ? "" : text.slice(split + 4);
  const lines = head.split("\r\n");
  const start = lines.shift() ?? "";
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    // A folded line continues the previous header (RFC 3261 §7.3.1).
    if (/^[ \t]/.test(line) && headers.size > 0) {
      const last = [...headers.values()].at(-1)!;
      last[last.length - 1] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const raw = line.slice(0, colon).trim().toLowerCase();
    const name = COMPACT[raw] ?? raw;
    const value = line.slice(colon + 1).trim();
    const values = headers.get(name) ?? [];
    values.push(value);
    headers.set(name, values);
  }
  const length = Number(headers.get("content-length")?.[0] ?? rest.length);
  const body = rest.slice(0, Number.isFinite(length) ? length : rest.length);
  const response = /^SIP\/2\.0 (\d{3}) ?(.*)$/.exec(start);
  if (response)
    return { kind: "response", status: Number(response[1]), reason: response[2] ?? "", headers, body };
  const request = /^([A-Z]+) (\S+) SIP\/2\.0$/.exec(start);
  if (request) return { kind: "request", method: request[1]!, uri: request[2]!, headers, body };
  return undefined;
}

export function header(m: SipMessage, name: string): string | undefined {
  return m.headers.get(name.toLowerCase())?.[0];
}

/** A request with Content-Length set from the body; headers in the order given. */
export function buildRequest(
  method: string,
  uri: string,
  headers: Array<[string, string]>,
  body = "",
): string {
  const lines = [`${method} ${uri} SIP/2.0`];
  for (const [k, v] of headers) lines.push(`${k}: ${v}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** The response to `req` (Via, From, To, Call-ID, CSeq copied; a To tag added when given; more headers and a body). */
export function buildResponse(
  req: SipRequest,
  status: number,
  reason: string,
  toTag?: string,
  extra: { headers?: Array<[string, string]>; body?: string } = {},
): string {
  const lines = [`SIP/2.0 ${status} ${reason}`];
  for (const v of req.headers.get("via") ?? []) lines.push(`Via: ${v}`);
  lines.push(`From: ${header(req, "from") ?? ""}`);
  const to = header(req, "to") ?? "";
  lines.push(`To: ${toTag && !/;tag=/.test(to) ? `${to};tag=${toTag}` : to}`);
  lines.push(`Call-ID: ${header(req, "call-id") ?? ""}`);
  lines.push(`CSeq: ${header(req, "cseq") ?? ""}`);
  for (const [k, v] of extra.headers ?? []) lines.push(`${k}: ${v}`);
  const body = extra.body ?? "";
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** The `tag` parameter of a From/To value. */
export function tagOf(value: string | undefined): string | undefined {
  return value ? /;\s*tag=([^;\s]+)/i.exec(value)?.[1] : undefined;
}

/** Host and port of the URI in a Contact value (`<sip:user@host:port;…>` or bare). */
export function contactTarget(value: string | undefined): { address: string; port: number } | undefined {
  if (!value) return undefined;
  const m = /sips?:(?:[^@>;]*@)?([^:;>\s]+)(?::(\d+))?/i.exec(value);
  if (!m) return undefined;
  return { address: m[1]!, port: m[2] ? Number(m[2]) : 5060 };
}

export interface SdpAudio {
  address: string;
  port: number;
  payloadTypes: number[];
}

/** The first audio m-line of an SDP body and its connection address. */
export function parseSdpAudio(sdp: string): SdpAudio | undefined {
  let session: string | undefined;
  let media: SdpAudio | undefined;
  for (const line of sdp.split(/\r?\n/)) {
    const c = /^c=IN IP[46] (\S+)/.exec(line);
    if (c) {
      if (media) media.address = c[1]!;
      else session = c[1];
      continue;
    }
    const m = /^m=audio (\d+) RTP\/S?AVP((?: \d+)+)/.exec(line);
    if (m && !media) {
      media = {
        address: session ?? "",
        port: Number(m[1]),
        payloadTypes: m[2]!.trim().split(" ").map(Number),
      };
      continue;
    }
    if (/^m=/.test(line) && media) break;
  }
  return media?.address ? media : undefined;
}

/**
 * An offer (or an answer) for one G.711 codec and RFC 4733 events on `eventPt`, sendrecv; with
 * `srtpKey`, RTP/SAVP keyed by SDES.
 */
export function offerSdp(
  address: string,
  port: number,
  codec: "pcmu" | "pcma",
  srtpKey?: Buffer,
  eventPt = 101,
): string {
  const pt = codec === "pcmu" ? 0 : 8;
  const name = codec === "pcmu" ? "PCMU" : "PCMA";
  const id = Math.floor(Math.random() * 1e9);
  return [
    "v=0",
    `o=bench ${id} ${id} IN IP4 ${address}`,
    "s=bench",
    `c=IN IP4 ${address}`,
    "t=0 0",
    `m=audio ${port} ${srtpKey ? "RTP/SAVP" : "RTP/AVP"} ${pt} ${eventPt}`,
    `a=rtpmap:${pt} ${name}/8000`,
    `a=rtpmap:${eventPt} telephone-event/8000`,
    `a=fmtp:${eventPt} 0-15`,
    "a=ptime:20",
    "a=sendrecv",
    ...(srtpKey ? [`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${srtpKey.toString("base64")}`] : []),
    "",
  ].join("\r\n");
}
