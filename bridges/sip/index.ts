// SIP bridge entry: a UAS on UDP and TCP that answers calls from a PBX or SIP trunk and hands
// each to the session as a CallTransport made by the media side (bridges/sip/rtp).

import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import type { AdmitCall, CallTransport } from "../transport.ts";
import type { SignallingConfig } from "./core-options.ts";
import type { SipFlow } from "./flow.ts";
import type { RtpPortPool, SipCallTransportFactory } from "./media-port.ts";
import { dialSip, type SipOutboundSettings } from "./outbound/uac.ts";
import { Registration, type RegistrationDeps, type RegistrationStatus } from "./registration.ts";
import { SipCore, type SipStats } from "./server.ts";
import { DEFAULT_TIMERS, type SipTimers } from "./transaction.ts";
import { listenTcp, type TcpTransport } from "./transport-tcp.ts";
import { listenTls, type TlsTransport } from "./transport-tls.ts";
import { listenUdp, type UdpTransport } from "./transport-udp.ts";

export type { SignallingConfig } from "./core-options.ts";
export { registerSipMetrics } from "./metrics.ts";
export type { RegistrationStatus } from "./registration.ts";
export type { SipStats } from "./server.ts";
export type { SipTimers } from "./transaction.ts";

export interface SipServerOptions {
  /** What signalling reads of the `sip` section (SIP off is the caller's to handle: no server). */
  readonly config: SignallingConfig;
  readonly log: Logger;
  readonly clock: Clock;
  readonly ports: RtpPortPool;
  readonly createTransport: SipCallTransportFactory;
  readonly onCall: (transport: CallTransport) => void;
  /** Asked while each new call rings (180) whether to answer it: a refusal is a 603 Decline. */
  readonly admit?: AdmitCall;
  /** RFC 3261 timers; tests shorten T1 (default 500/4000/5000 ms). */
  readonly timers?: SipTimers;
  /** Retry-After while draining, seconds (default 30). */
  readonly retryAfterS?: number;
  /** Outbound calls: the proxy INVITEs go through, its credentials, the caller id (`outbound.sip`). */
  readonly outbound?: SipOutboundSettings;
  /** Registration retry delays and route checks (tests shorten them). */
  readonly registrationTiming?: Pick<RegistrationDeps, "backoffMs" | "watchMs">;
}

export interface SipServer {
  readonly udpPort: number;
  readonly tcpPort: number;
  /** SIP over TLS, when sip.tlsPort is set. */
  readonly tlsPort?: number;
  readonly stats: SipStats;
  /** Places calls through outbound.sip.proxy; undefined when no proxy is configured. */
  readonly dial: Dialer | undefined;
  /** Each account in sip.registrations: registered, registering, failed (and why). */
  readonly registrations: () => RegistrationStatus[];
  /** Reads the TLS certificate and key again (SIGHUP); a bad pair is logged and the old one kept. */
  reloadTls(): Promise<void>;
  /** TCP and TLS connections open now (callers', and ours for in-dialog requests). */
  readonly tcpConnections: number;
  /**
   * Unregisters, refuses new calls and OPTIONS probes with 503 + Retry-After; calls in progress
   * carry on. Resolves when the last call has ended (then close()).
   */
  drain(): Promise<void>;
  /** Hangs up every call (BYE), stops listening. */
  close(): Promise<void>;
}

export async function startSipServer(opts: SipServerOptions): Promise<SipServer> {
  const log = opts.log.child({ bridge: "sip" });
  const ports: { udp?: UdpTransport; tcp?: TcpTransport; tls?: TlsTransport } = {};
  /** The stream transport of a flow, for new connections. */
  const stream = (t: SipFlow["transport"]): TcpTransport => {
    const s = t === "TLS" ? ports.tls : ports.tcp;
    if (!s)
      throw new Error(
        `SIP over ${t} is not listening${t === "TLS" ? " (set SIP_TLS_PORT, SIP_TLS_CERT, SIP_TLS_KEY)" : ""}`,
      );
    return s;
  };
  const portOf = (t: SipFlow["transport"]): number =>
    (t === "TLS" ? ports.tls?.port : t === "TCP" ? ports.tcp?.port : ports.udp?.port) ?? 0;
  const timers = opts.timers ?? DEFAULT_TIMERS;
  const core = new SipCore({
    config: opts.config,
    log,
    clock: opts.clock,
    timers,
    ports: opts.ports,
    createTransport: opts.createTransport,
    onCall: opts.onCall,
    ...(opts.admit ? { admit: opts.admit } : {}),
    retryAfterS: opts.retryAfterS ?? 30,
    listenPort: portOf,
    connect: (transport, address, port) => stream(transport).connect(address, port),
  });
  const onError = (err: Error): void => log.warn({ err: err.message }, "sip: socket error");
  const { host, port } = opts.config;
  ports.udp = await listenUdp(host, port, (bytes, flow) => core.receive(bytes, flow), onError);
  const handlers = {
    onPacket: (bytes: Buffer, flow: Parameters<typeof core.receive>[1]) => core.receive(bytes, flow),
    onBadFrame: (error: string, flow: Parameters<typeof core.receive>[1], bytes?: Buffer) =>
      core.badFrame(error, flow, bytes),
    onError,
  };
  // TCP on the same port number as UDP; with an ephemeral port that number may be taken over TCP.
  try {
    ports.tcp = await listenTcp(host, ports.udp.port, handlers);
  } catch (err) {
    if (port !== 0) {
      await ports.udp.close();
      throw err;
    }
    ports.tcp = await listenTcp(host, 0, handlers);
  }
  const { tlsPort, tlsCert, tlsKey } = opts.config;
  if (tlsPort !== undefined && tlsPort !== false && tlsCert && tlsKey) {
    try {
      ports.tls = await listenTls(
        host,
        tlsPort,
        { cert: tlsCert, key: tlsKey },
        opts.config.tlsVerify ?? true,
        handlers,
      );
    } catch (err) {
      await Promise.all([ports.udp.close(), ports.tcp.close()]);
      throw err;
    }
  }
  const { udp, tcp, tls } = ports;
  const registrations = (opts.config.registrations ?? []).map(
    (account) =>
      new Registration(account, {
        clock: opts.clock,
        log,
        send: (req, flow) => core.request(req, flow),
        flowTo: (transport, address, port, name) =>
          transport === "UDP" ? udp.flowTo(address, port) : stream(transport).connect(address, port, name),
        listenPort: portOf,
        ...(opts.config.publicIp ? { publicIp: opts.config.publicIp } : {}),
        trust: (address) => core.trust(address),
        ...opts.registrationTiming,
      }),
  );
  for (const r of registrations) r.start();
  const outbound = opts.outbound;
  const proxy = outbound?.proxy;
  const dial: Dialer | undefined = proxy
    ? (req, events) =>
        dialSip(
          {
            proxy,
            ...(outbound.user ? { user: outbound.user } : {}),
            ...(outbound.password ? { password: outbound.password } : {}),
            ...(outbound.from ? { from: outbound.from } : {}),
            ...(opts.config.publicIp ? { publicIp: opts.config.publicIp } : {}),
            clock: opts.clock,
            timers,
            mediaTimeoutMs: opts.config.mediaTimeoutS * 1000,
            invites: core.invites,
            request: (r, flow) => core.request(r, flow),
            dialogs: core.dialogDeps,
            addDialog: (d) => core.addDialog(d),
            trust: (address) => core.trust(address),
            flowTo: (transport, address, port, name) =>
              transport === "UDP"
                ? udp.flowTo(address, port)
                : stream(transport).connect(address, port, name),
            listenPort: portOf,
            ports: opts.ports,
            createTransport: opts.createTransport,
          },
          req,
          events,
        )
    : undefined;
  const unregister = async (): Promise<void> => {
    await Promise.all(registrations.map((r) => r.stop()));
  };
  log.info(
    {
      host,
      udpPort: udp.port,
      tcpPort: tcp.port,
      tlsPort: tls?.port,
      publicIp: opts.config.publicIp,
      codecs: opts.config.codecs,
    },
    "sip: listening",
  );
  return {
    udpPort: udp.port,
    tcpPort: tcp.port,
    ...(tls ? { tlsPort: tls.port } : {}),
    stats: core.stats,
    dial,
    registrations: () => registrations.map((r) => r.status()),
    get tcpConnections() {
      return tcp.connections + (tls?.connections ?? 0);
    },
    reloadTls: async () => {
      if (!tls) return;
      try {
        await tls.reload();
        log.info({ cert: tlsCert }, "sip: TLS certificate and key read again");
      } catch (err) {
        log.error({ err: (err as Error).message }, "sip: TLS certificate reload failed, the old one stays");
      }
    },
    drain: () => {
      void unregister();
      return core.drain();
    },
    close: async () => {
      await unregister();
      await core.close();
      await Promise.all([udp.close(), tcp.close(), tls?.close()]);
      log.info("sip: closed");
    },
  };
}
