// What the UAS core is given by startSipServer (bridges/sip/index.ts).
import type { Config } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { AdmitCall, CallTransport } from "../transport.ts";
import type { SipFlow } from "./flow.ts";
import type { RtpPortPool, SipCallTransportFactory } from "./media-port.ts";
import type { SipTimers } from "./transaction.ts";

/** Access keys a caller of the stack may leave out: their defaults are the schema's (private sources only). */
type AccessKeys =
  | "allowFrom"
  | "rateLimit"
  | "users"
  | "digestAlgorithms"
  | "registrations"
  | "tlsPort"
  | "tlsCert"
  | "tlsKey"
  | "tlsVerify"
  | "srtp";

/** The `sip` config section less what only the media side reads (which thread RTP runs on). */
export type SignallingConfig = Omit<Config["sip"], "rtpThread" | AccessKeys> &
  Partial<Pick<Config["sip"], AccessKeys>>;

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
