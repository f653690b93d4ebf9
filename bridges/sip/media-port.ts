// The seam between SIP signalling (dialogs, SDP offer/answer) and SIP media (RTP): what the
// signalling side negotiated for a call, and what it asks of the media side. Signalling never
// touches RTP packets; media never parses SIP.

import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallInfo, CallTransport } from "../transport.ts";

export type SipCodecName = "opus" | "pcmu" | "pcma";

/** The one codec chosen for the call's audio m-line. */
export interface NegotiatedCodec {
  readonly name: SipCodecName;
  /** Payload type as the offer numbered it (0 PCMU, 8 PCMA, dynamic for Opus). */
  readonly payloadType: number;
  /** RTP clock rate: 8000 for G.711, 48000 for Opus. */
  readonly clockRate: number;
}

/** Direction from our side, as written in our answer. */
export type MediaDirection = "sendrecv" | "sendonly" | "recvonly" | "inactive";

export type SrtpSuite = "AES_CM_128_HMAC_SHA1_80" | "AES_CM_128_HMAC_SHA1_32";

/** SDES-SRTP keys agreed for the call (RFC 4568): one per direction, 16 bytes of key + 14 of salt. */
export interface SrtpKeys {
  readonly suite: SrtpSuite;
  /** Authentication tag length of the suite. */
  readonly tagBits: 80 | 32;
  /** The crypto line's tag, echoed in the answer. */
  readonly tag: number;
  /** The caller's key: decrypts what it sends. */
  readonly remoteKey: Uint8Array;
  /** Ours, as our SDP says: encrypts what we send. */
  readonly localKey: Uint8Array;
}

export interface NegotiatedMedia {
  readonly codec: NegotiatedCodec;
  /** RFC 4733 telephone-event payload type the offer carried (the answer reuses it), if any. */
  readonly telephoneEventPt?: number;
  /** Where the SDP says to send RTP; symmetric RTP replaces it with where packets come from. */
  readonly remote: { readonly address: string; readonly port: number };
  /** Our direction: `recvonly` while the caller holds (their `sendonly`), `inactive` on their `inactive`. */
  readonly direction: MediaDirection;
  /** SRTP keys when the stream is encrypted (RTP/SAVP with SDES); absent for plain RTP. */
  readonly srtp?: SrtpKeys;
  /**
   * Early media (a 180/183's SDP on a call we placed, before its 200): what the far end sends is
   * heard, nothing is sent, and its silence does not count toward the media timeout.
   */
  readonly early?: boolean;
}

/** An RTP socket bound on an even port of the configured range, owned by one call. */
export interface RtpEndpoint {
  /** The port to put in the SDP answer. */
  readonly port: number;
  /** Frees the port (idempotent). */
  close(): void;
}

/** Hands out RTP endpoints from `RTP_PORTS`; rejects when every port is taken. */
export interface RtpPortPool {
  open(): Promise<RtpEndpoint>;
  /** Endpoints open now (for leak checks). */
  readonly inUse: number;
}

/** What media asks of signalling for one call. */
export interface SipCallControl {
  /** Ends the dialog from our side (BYE). */
  hangUp(reason: string): Promise<void>;
  /** Blind transfer by REFER; resolves when a NOTIFY reports success, rejects with the reason otherwise. */
  transfer(target: string): Promise<void>;
  /** Sends a keypad digit by INFO (application/dtmf-relay); resolves on its 2xx, rejects otherwise. */
  dtmfInfo?(digit: string, durationMs: number): Promise<void>;
}

export interface SipCallTransportOptions {
  info: CallInfo;
  endpoint: RtpEndpoint;
  media: NegotiatedMedia;
  control: SipCallControl;
  clock: Clock;
  log: Logger;
  /** No RTP for this long ends the call (BYE), ms. */
  mediaTimeoutMs: number;
  /** While the media is early: where its frames go (a lent buffer), never to the transport's listener. */
  earlyAudio?: (pcm: Int16Array) => void;
}

/** The session's transport for one SIP call, made by the media side once the INVITE is answered. */
export interface SipCallTransport extends CallTransport {
  /** A re-INVITE changed the media (hold/resume, a new address). */
  updateMedia(media: NegotiatedMedia): void;
  /** A keypad digit the caller sent by SIP INFO (the same press also sent by RTP is passed on once). */
  digitFromInfo(digit: string): void;
  /** The dialog ended on the signalling side (BYE, CANCEL, timeout): stop media, free the port, tell the session. */
  end(reason: string): void;
}

export type SipCallTransportFactory = (opts: SipCallTransportOptions) => SipCallTransport;
