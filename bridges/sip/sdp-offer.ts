// Our SDP offer, for an INVITE that came without one (late offer, RFC 3261 §13.2.1): every
// configured codec in preference order, and telephone-event at each clock rate offered.
import type { SipCodecName } from "./media-port.ts";

/** Payload types we number our own offer with (static ones as RFC 3551 fixes them). */
const OFFERED: Readonly<Record<SipCodecName, { pt: number; rtpmap: string; fmtp?: string }>> = {
  pcmu: { pt: 0, rtpmap: "PCMU/8000" },
  pcma: { pt: 8, rtpmap: "PCMA/8000" },
  opus: { pt: 111, rtpmap: "opus/48000/2", fmtp: "useinbandfec=1" },
};
const EVENTS_8K = 101;
const EVENTS_48K = 102;

export interface OfferSpec {
  readonly address: string;
  readonly port: number;
  readonly sessionId: number;
  readonly version: number;
  readonly codecs: readonly SipCodecName[];
  /** SRTP required: the offer is RTP/SAVP with this key (AES_CM_128_HMAC_SHA1_80). */
  readonly srtpKey?: Uint8Array;
}

export function writeOffer(o: OfferSpec): string {
  const narrow = o.codecs.some((c) => c !== "opus");
  const wide = o.codecs.includes("opus");
  const pts = [
    ...o.codecs.map((c) => OFFERED[c].pt),
    ...(narrow ? [EVENTS_8K] : []),
    ...(wide ? [EVENTS_48K] : []),
  ];
  const lines = [
    "v=0",
    `o=voice-bridge ${o.sessionId} ${o.version} IN IP4 ${o.address}`,
    "s=voice-bridge",
    `c=IN IP4 ${o.address}`,
    "t=0 0",
    `m=audio ${o.port} ${o.srtpKey ? "RTP/SAVP" : "RTP/AVP"} ${pts.join(" ")}`,
  ];
  for (const c of o.codecs) {
    const { pt, rtpmap, fmtp } = OFFERED[c];
    lines.push(`a=rtpmap:${pt} ${rtpmap}`);
    if (fmtp) lines.push(`a=fmtp:${pt} ${fmtp}`);
  }
  if (narrow) lines.push(`a=rtpmap:${EVENTS_8K} telephone-event/8000`, `a=fmtp:${EVENTS_8K} 0-16`);
  if (wide) lines.push(`a=rtpmap:${EVENTS_48K} telephone-event/48000`, `a=fmtp:${EVENTS_48K} 0-16`);
  lines.push("a=ptime:20", "a=sendrecv");
  if (o.srtpKey)
    lines.push(`a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${Buffer.from(o.srtpKey).toString("base64")}`);
  return `${lines.join("\r\n")}\r\n`;
}
