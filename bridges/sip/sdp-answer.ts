// SDP offer/answer (RFC 3264) for one audio stream: pick one codec for the first usable audio
// m-line in the offer's order among the configured codecs, reuse the caller's telephone-event
// payload type, answer every other m-line with port 0, and mirror the direction (their sendonly
// is our recvonly: getting hold wrong makes carriers hang up).
import { parse as parseSdp } from "sdp-transform";
import type { MediaDirection, NegotiatedCodec, NegotiatedMedia, SipCodecName } from "./media-port.ts";
import { chooseCrypto, cryptoLine, type SrtpPolicy } from "./sdp-crypto.ts";

type SdpMedia = ReturnType<typeof parseSdp>["media"][number];

const STATIC: Readonly<Record<number, SipCodecName>> = { 0: "pcmu", 8: "pcma" };
const RTPMAP: Readonly<Record<string, SipCodecName>> = {
  "pcmu/8000": "pcmu",
  "pcma/8000": "pcma",
  "opus/48000": "opus",
};
const WRITTEN: Readonly<Record<SipCodecName, string>> = {
  pcmu: "PCMU/8000",
  pcma: "PCMA/8000",
  opus: "opus/48000/2",
};

export type OfferResult =
  | {
      readonly ok: true;
      readonly media: NegotiatedMedia /** index of the chosen m-line */;
      readonly index: number;
      readonly lines: readonly OfferLine[];
    }
  | { readonly ok: false; readonly status: 488; readonly reason: string };

/** Just what the answer must echo of each offered m-line. */
export interface OfferLine {
  readonly type: string;
  readonly protocol: string;
  readonly firstPayload: string;
}

const FLIP: Readonly<Record<MediaDirection, MediaDirection>> = {
  sendrecv: "sendrecv",
  sendonly: "recvonly",
  recvonly: "sendonly",
  inactive: "inactive",
};

/**
 * Reads an offer and chooses what we answer, or says why nothing can be. `srtp`: whether an
 * encrypted stream (a=crypto, on RTP/SAVP or best-effort on RTP/AVP) is taken, and whether a
 * plain one is; `ourKey` keeps our SRTP key across a re-INVITE (or is the one our own offer sent).
 */
export function negotiate(
  sdp: string,
  codecs: readonly SipCodecName[],
  srtp: SrtpPolicy = "optional",
  ourKey?: Uint8Array,
): OfferResult {
  let parsed: ReturnType<typeof parseSdp>;
  try {
    parsed = parseSdp(sdp);
  } catch (err) {
    return { ok: false, status: 488, reason: `unreadable SDP: ${(err as Error).message}` };
  }
  if (!parsed.media?.length) return { ok: false, status: 488, reason: "SDP offer has no m= line" };
  const lines = parsed.media.map((m) => ({
    type: String(m.type),
    protocol: String(m.protocol),
    firstPayload:
      String(m.payloads ?? "0")
        .trim()
        .split(/\s+/)[0] ?? "0",
  }));
  let refusedPlain = false;
  for (let index = 0; index < parsed.media.length; index++) {
    const m = parsed.media[index]!;
    const secure = /^RTP\/SAVPF?$/i.test(String(m.protocol));
    if (m.type !== "audio" || m.port === 0 || !(secure || /^RTP\/AVPF?$/i.test(String(m.protocol)))) continue;
    const codec = chooseCodec(m, codecs);
    if (!codec) continue;
    const keys = srtp === "off" ? undefined : chooseCrypto(m.crypto ?? [], ourKey);
    if (secure && !keys) continue;
    if (!keys && srtp === "required") {
      refusedPlain = true;
      continue;
    }
    const address = m.connection?.ip ?? parsed.connection?.ip;
    if (!address) return { ok: false, status: 488, reason: "SDP offer has no c= address for its audio" };
    const theirs = (m.direction ?? parsed.direction ?? "sendrecv") as MediaDirection;
    // RFC 2543 hold: c=0.0.0.0 means "send me nothing".
    const direction =
      address === "0.0.0.0" ? (theirs === "inactive" ? "inactive" : "recvonly") : FLIP[theirs];
    const te = telephoneEvent(m, codec.clockRate);
    return {
      ok: true,
      index,
      lines,
      media: {
        codec,
        remote: { address, port: m.port },
        direction,
        ...(te === undefined ? {} : { telephoneEventPt: te }),
        ...(keys ? { srtp: keys } : {}),
      },
    };
  }
  if (refusedPlain)
    return {
      ok: false,
      status: 488,
      reason: "SRTP is required (sip.srtp): the offer has no a=crypto with AES_CM_128_HMAC_SHA1_80 or _32",
    };
  return {
    ok: false,
    status: 488,
    reason: `no audio stream offers any of ${codecs.join(", ")} over RTP/AVP${srtp === "off" ? "" : " or RTP/SAVP with a usable a=crypto"}`,
  };
}

function payloadList(m: SdpMedia): number[] {
  return String(m.payloads ?? "")
    .trim()
    .split(/\s+/)
    .filter((p) => /^\d+$/.test(p))
    .map(Number);
}

function chooseCodec(m: SdpMedia, codecs: readonly SipCodecName[]): NegotiatedCodec | undefined {
  for (const pt of payloadList(m)) {
    const map = m.rtp.find((r) => r.payload === pt);
    const name = map ? RTPMAP[`${map.codec.toLowerCase()}/${map.rate}`] : STATIC[pt];
    if (!name || !codecs.includes(name)) continue;
    if (name === "opus" && map?.encoding !== undefined && Number(map.encoding) !== 2) continue;
    return { name, payloadType: pt, clockRate: name === "opus" ? 48000 : 8000 };
  }
  return undefined;
}

function telephoneEvent(m: SdpMedia, rate: number): number | undefined {
  const events = m.rtp.filter((r) => r.codec.toLowerCase() === "telephone-event");
  return (events.find((r) => r.rate === rate) ?? events[0])?.payload;
}

export interface AnswerSpec {
  readonly address: string;
  readonly port: number;
  readonly sessionId: number;
  readonly version: number;
  readonly media: NegotiatedMedia;
  readonly index: number;
  readonly lines: readonly OfferLine[];
}

/** Our answer: the chosen audio m-line at our port, every other offered line refused with port 0. */
export function writeAnswer(a: AnswerSpec): string {
  const { codec, telephoneEventPt: te, direction } = a.media;
  const out = [
    "v=0",
    `o=voice-bridge ${a.sessionId} ${a.version} IN IP4 ${a.address}`,
    "s=voice-bridge",
    `c=IN IP4 ${a.address}`,
    "t=0 0",
  ];
  a.lines.forEach((line, i) => {
    if (i !== a.index) {
      out.push(`m=${line.type} 0 ${line.protocol} ${line.firstPayload}`);
      return;
    }
    // The offer's profile: RTP/SAVP for SRTP, and RTP/AVP (with a crypto line when SRTP was
    // offered there, best effort) otherwise.
    const profile = /SAVP/i.test(line.protocol) ? "RTP/SAVP" : "RTP/AVP";
    out.push(`m=audio ${a.port} ${profile} ${codec.payloadType}${te === undefined ? "" : ` ${te}`}`);
    out.push(`a=rtpmap:${codec.payloadType} ${WRITTEN[codec.name]}`);
    if (codec.name === "opus") out.push(`a=fmtp:${codec.payloadType} useinbandfec=1`);
    if (te !== undefined) out.push(`a=rtpmap:${te} telephone-event/${codec.clockRate}`, `a=fmtp:${te} 0-16`);
    out.push("a=ptime:20", `a=${direction}`);
    if (a.media.srtp) out.push(cryptoLine(a.media.srtp));
  });
  return `${out.join("\r\n")}\r\n`;
}
