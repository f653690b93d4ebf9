// What the UAS core is given by startSipServer (bridges/sip/index.ts).
import type { SipRegistration, SipUser } from "../../src/config/sip-access.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { AdmitCall, CallTransport } from "../transport.ts";
import type { DigestAlgorithm } from "./digest.ts";
import type { SipFlow } from "./flow.ts";
import type { RtpPortPool, SipCallTransportFactory, SipCodecName } from "./media-port.ts";
import type { SrtpPolicy } from "./sdp-crypto.ts";
import type { SipTimers } from "./transaction.ts";

/**
 * What SIP signalling reads of the bridge's configuration. The access keys a caller may leave
 * out take the schema's defaults (private sources only, 50 requests a second, no digest, no TLS).
 */
export interface SignallingConfig {
  /** UDP, and TCP on the same number; 0: an ephemeral port. */
  readonly port: number;
  readonly host: string;
  /** Advertised in Contact and SDP when the bridge is behind NAT. */
  readonly publicIp?: string | undefined;
  /** Offered and accepted, in preference order. */
  readonly codecs: readonly SipCodecName[];
  /** A call with no RTP for this long is hung up. */
  readonly mediaTimeoutS: number;
  readonly allowFrom?: readonly string[];
  readonly rateLimit?: number;
  readonly users?: readonly SipUser[];
  readonly digestAlgorithms?: readonly DigestAlgorithm[];
  readonly registrations?: readonly SipRegistration[];
  readonly tlsPort?: number | false;
  readonly tlsCert?: string | undefined;
  readonly tlsKey?: string | undefined;
  readonly tlsVerify?: boolean;
  readonly srtp?: SrtpPolicy;
}

export interface SipCoreOptions {
  readonly config: SignallingConfig;
  readonly log: Logger;
  readonly clock: Clock;
  readonly timers: SipTimers;
  readonly ports: RtpPortPool;
  readonly createTransport: SipCallTransportFactory;
  readonly onCall: (transport: CallTransport) => void;
  /** Asked while the call rings (180) whether to answer it; a refusal is a 603 Decline. */
  readonly admit?: AdmitCall;
  /** Realm of the digest challenges when sip.users is set (default voice-bridge). */
  readonly digestRealm?: string;
  /** Retry-After on 503 while draining, seconds. */
  readonly retryAfterS: number;
  /** The port each transport listens on, for Via and Contact. */
  readonly listenPort: (transport: SipFlow["transport"]) => number;
  /** A new TCP or TLS connection, for in-dialog requests once the caller's connection has closed. */
  readonly connect: (transport: SipFlow["transport"], address: string, port: number) => SipFlow;
}
