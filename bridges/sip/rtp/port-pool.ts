// RTP endpoints for calls: one UDP socket per call on an even port of the configured range
// (RTP on even ports, RFC 3550 §11). Ports are handed out round-robin from where the last one
// was found, so a port just freed is the last to be reused (late packets of the old call do not
// land in a new one). A port some other program holds (EADDRINUSE) is skipped; when every port
// is taken, open() rejects with the range in the message.
import dgram from "node:dgram";
import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import type { RtpPortPool } from "../media-port.ts";
import {
  RtpCallMedia,
  type RtpMediaEndpoint,
  type RtpMediaEvents,
  type RtpMediaLink,
  type RtpMediaOptions,
} from "./call-media.ts";
import { rtpSender } from "./native-sender.ts";

export interface PortRange {
  low: number;
  high: number;
}

/** Reads "LOW-HIGH" (as `sip.rtpPorts` holds it) into a range with at least one even port. */
export function parsePortRange(spec: string): PortRange {
  const m = /^(\d+)-(\d+)$/.exec(spec.trim());
  if (!m)
    throw new RangeError(
      `RTP port range: expected LOW-HIGH such as 10000-20000, got ${JSON.stringify(spec)}`,
    );
  const low = Number(m[1]);
  const high = Number(m[2]);
  if (low < 1 || high > 65535 || low > high)
    throw new RangeError(`RTP port range: expected 1 ≤ LOW ≤ HIGH ≤ 65535, got ${spec}`);
  const firstEven = low + (low % 2);
  if (firstEven > high) throw new RangeError(`RTP port range ${spec} holds no even port`);
  return { low: firstEven, high };
}

/** The call's RTP socket; what the transport sends and receives on. */
export class UdpRtpEndpoint implements RtpMediaEndpoint {
  readonly port: number;
  readonly socket: dgram.Socket;
  /** The socket's descriptor: the RTP send thread sends on it, dgram receives. */
  readonly fd: number;
  readonly #release: () => void;
  #closed = false;

  constructor(bound: BoundSocket, port: number, release: () => void) {
    this.socket = bound.socket;
    this.fd = bound.fd;
    this.port = port;
    this.#release = release;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The call's media on this socket, on this thread. */
  startMedia(opts: RtpMediaOptions, events: RtpMediaEvents): RtpMediaLink {
    return new RtpCallMedia(this, opts, events);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.socket.removeAllListeners("message");
    this.socket.close();
    this.#release();
  }
}

/**
 * Resolves an IP literal synchronously (anything else through DNS). dgram looks every
 * destination up before sending, and its default lookup answers an IP on the next tick: the
 * datagram would be read after the call reused its packet buffer.
 */
function syncLookup(
  address: string,
  _options: unknown,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  const family = isIP(address);
  if (family !== 0) {
    callback(null, address, family);
    return;
  }
  dnsLookup(address, { family: 4 }, callback);
}

export interface UdpRtpPortPoolOptions {
  /** Address to bind (`sip.host`). */
  host: string;
  /** `sip.rtpPorts`, "LOW-HIGH". */
  ports: string;
}

export class UdpRtpPortPool implements RtpPortPool {
  readonly host: string;
  readonly range: PortRange;
  readonly #taken = new Set<number>();
  #cursor: number;
  /** `host` as an IP literal. */
  #address: string | undefined;

  constructor(opts: UdpRtpPortPoolOptions) {
    this.host = opts.host;
    this.range = parsePortRange(opts.ports);
    this.#cursor = this.range.low;
  }

  get inUse(): number {
    return this.#taken.size;
  }

  async open(): Promise<RtpMediaEndpoint> {
    return this.openUdp();
  }

  /** open(), typed as the UDP endpoint the SIP call transport needs. */
  async openUdp(): Promise<UdpRtpEndpoint> {
    const { low, high } = this.range;
    this.#address ??= await resolveHost(this.host);
    const count = Math.floor((high - low) / 2) + 1;
    let busy = 0;
    for (let tried = 0; tried < count; tried++) {
      const port = this.#cursor;
      this.#cursor = port + 2 > high ? low : port + 2;
      if (this.#taken.has(port)) continue;
      this.#taken.add(port);
      const socket = await bindRtpSocket(this.#address, port).catch((err: NodeJS.ErrnoException) => {
        this.#taken.delete(port);
        if (err.code === "EADDRINUSE" || err.code === "EACCES") return undefined;
        throw err;
      });
      if (!socket) {
        busy++;
        continue;
      }
      return new UdpRtpEndpoint(socket, port, () => this.#taken.delete(port));
    }
    throw new Error(
      `no free RTP port in ${low}-${high} on ${this.host}: ${this.#taken.size} held by calls, ${busy} by other programs`,
    );
  }
}

function resolveHost(host: string): Promise<string> {
  if (isIP(host) !== 0) return Promise.resolve(host);
  return new Promise((resolve, reject) =>
    dnsLookup(host, (err, address) =>
      err ? reject(new Error(`RTP host ${host}: ${err.message}`)) : resolve(address),
    ),
  );
}

export interface BoundSocket {
  socket: dgram.Socket;
  fd: number;
}

const ERRNO: Record<number, string> = { [-98]: "EADDRINUSE", [-13]: "EACCES", [-99]: "EADDRNOTAVAIL" };

/**
 * A UDP socket on host:port, bound by the RTP send thread's addon (so that the thread sends on
 * the descriptor that Node's dgram then receives on). `host` is an IP literal (openUdp resolves
 * a name first).
 */
export function bindRtpSocket(host: string, port: number): Promise<BoundSocket> {
  const fd = rtpSender().bindUdp(host, port);
  if (fd < 0) {
    const code = ERRNO[fd] ?? `errno ${-fd}`;
    return Promise.reject(Object.assign(new Error(`bind ${host}:${port}: ${code}`), { code }));
  }
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({ type: isIP(host) === 6 ? "udp6" : "udp4", lookup: syncLookup });
    const onError = (err: Error) => {
      socket.close();
      reject(err);
    };
    socket.once("error", onError);
    socket.bind({ fd }, () => {
      socket.off("error", onError);
      resolve({ socket, fd });
    });
  });
}
