// SIP over TCP (and TLS, which reads the same way: transport-tls.ts): each connection cut into
// messages by Content-Length; responses go back on the connection the request came on. A framing
// error gets a 400 (when the headers allow one) and the connection is closed, since nothing after
// it can be trusted.
import { connect, createServer, type Server, type Socket } from "node:net";
import type { PacketHandler, SipFlow } from "./flow.ts";
import { SipStreamFramer } from "./stream-framer.ts";

export interface TcpTransport {
  readonly port: number;
  readonly connections: number;
  /**
   * A new connection to `address:port` (an in-dialog request after the caller's connection closed,
   * a registration); `name`: the host name it was found by (TLS checks the certificate against it).
   */
  connect(address: string, port: number, name?: string): SipFlow;
  close(): Promise<void>;
}

export interface TcpHandlers {
  onPacket: PacketHandler;
  /** Framing failed: `bytes` are the headers when they could be cut out (to answer 400). */
  onBadFrame(error: string, flow: SipFlow, bytes?: Buffer): void;
  onError(err: Error): void;
}

/** Connections idle this long are closed (a client that connects and never speaks). */
const IDLE_MS = 15 * 60_000;

/** The connections of one stream transport: inbound and outbound ones are read alike. */
export class StreamConnections {
  readonly sockets = new Set<Socket>();
  readonly #transport: "TCP" | "TLS";
  readonly #handlers: TcpHandlers;

  constructor(transport: "TCP" | "TLS", handlers: TcpHandlers) {
    this.#transport = transport;
    this.#handlers = handlers;
  }

  /** Messages to the stack, pings answered; `remote` as the peer is known (before a connect completes). */
  adopt(socket: Socket, remote: SipFlow["remote"]): SipFlow {
    const handlers = this.#handlers;
    this.sockets.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    const framer = new SipStreamFramer();
    let error: string | undefined;
    const onError = new Set<(reason: string) => void>();
    const flow: SipFlow = {
      transport: this.#transport,
      remote,
      get local() {
        return { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
      },
      reliable: true,
      get usable() {
        return !socket.destroyed && socket.writable;
      },
      get error() {
        return error;
      },
      onError: (listener) => {
        if (error !== undefined) {
          listener(error);
          return () => {};
        }
        onError.add(listener);
        return () => onError.delete(listener);
      },
      send: (bytes) => {
        // Writes before an outbound connection is up are buffered by the socket.
        if (!socket.destroyed && socket.writable) socket.write(bytes);
      },
    };
    let unreadable = false;
    socket.on("data", (chunk: Buffer) => {
      if (unreadable) return;
      for (const ev of framer.push(chunk)) {
        if (ev.type === "message") handlers.onPacket(ev.bytes, flow);
        else if (ev.type === "ping") flow.send(Buffer.from("\r\n"));
        else {
          unreadable = true;
          handlers.onBadFrame(ev.error, flow, ev.bytes);
          // The 400 goes out, then the connection is gone: ending only our side left it open for
          // as long as the peer kept theirs (IDLE_MS), one more for a stranger to pile up.
          socket.end(() => socket.destroy());
          return;
        }
      }
    });
    socket.on("error", (err) => {
      error = err.message;
      socket.destroy();
      const listeners = [...onError];
      onError.clear();
      for (const listener of listeners) listener(err.message);
    });
    socket.on("close", () => this.sockets.delete(socket));
    return flow;
  }

  /** Listens with `server` (net or tls) on host:port; resolves with the bound port. */
  async listen(server: Server, host: string, port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", this.#handlers.onError);
    const addr = server.address();
    return typeof addr === "object" && addr ? addr.port : port;
  }

  close(server: Server): Promise<void> {
    return new Promise<void>((resolve) => {
      for (const s of this.sockets) s.destroy();
      server.close(() => resolve());
    });
  }
}

export async function listenTcp(host: string, port: number, handlers: TcpHandlers): Promise<TcpTransport> {
  const conns = new StreamConnections("TCP", handlers);
  const server: Server = createServer((socket) => {
    conns.adopt(socket, { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 });
  });
  const bound = await conns.listen(server, host, port);
  return {
    port: bound,
    get connections() {
      return conns.sockets.size;
    },
    connect: (address, rport) =>
      conns.adopt(connect({ host: address, port: rport }), { address, port: rport }),
    close: () => conns.close(server),
  };
}
