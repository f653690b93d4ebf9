// A flow is where a message came from and how to answer on the same path: a UDP source
// address, or the TCP connection it arrived on (RFC 3261 §18.2.2, RFC 3581 symmetric responses).

export interface SipAddress {
  readonly address: string;
  readonly port: number;
}

export interface SipFlow {
  readonly transport: "UDP" | "TCP" | "TLS";
  /** Where the message came from (the real source, whatever Via says). */
  readonly remote: SipAddress;
  /** The address and port it arrived on (0.0.0.0 for a wildcard UDP socket). */
  readonly local: SipAddress;
  /** TCP: no retransmissions, the transport is reliable. */
  readonly reliable: boolean;
  /** False once a TCP connection has closed: requests then need a new connection. */
  readonly usable: boolean;
  send(bytes: Buffer): void;
  /** Why a connection failed (a refused TLS certificate, a reset), once it has. */
  readonly error?: string;
  /**
   * Hears the connection fail (stream transports: refused, reset, a refused certificate), at once
   * when it already has: a request on it then gets no answer, and its transaction ends now
   * (RFC 3261 §8.1.3.1: a transport error is a 503) instead of at its timeout. Returns what stops
   * the listening, for a transaction that ended first (a connection outlives many).
   */
  onError?(listener: (reason: string) => void): () => void;
}

/** What a transport hands to the stack. */
export type PacketHandler = (bytes: Buffer, flow: SipFlow) => void;
