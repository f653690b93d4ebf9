// SIP over TCP: each connection cut into messages by Content-Length; responses go back on the
// connection the request came on. A framing error gets a 400 (when the headers allow one) and
// the connection is closed, since nothing after it can be trusted.
import { connect, createServer, type Server, type Socket } from "node:net";
import type { PacketHandler, SipFlow } from "./flow.ts";
import { SipStreamFramer } from "./stream-framer.ts";

export interface TcpTransport {
  readonly port: number;
  readonly connections: number;
  /** A new connection to `address:port` (an in-dialog request after the caller's connection closed). */
  connect(address: string, port: number): SipFlow;
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

export async function listenTcp(host: string, port: number, handlers: TcpHandlers): Promise<TcpTransport> {
  const sockets = new Set<Socket>();
  // Inbound and outbound connections are read alike: messages to the stack, pings answered.
  const adopt = (socket: Socket, remote: SipFlow["remote"]): SipFlow => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    const framer = new SipStreamFramer();
    const flow: SipFlow = {
      transport: "TCP",
      remote,
      local: { address: socket.localAddress ?? "", port: socket.localPort ?? 0 },
      reliable: true,
      get usable() {
        return !socket.destroyed && socket.writable;
      },
      send: (bytes) => {
        // Writes before an outbound connection is up are buffered by the socket.
        if (!socket.destroyed && socket.writable) socket.write(bytes);
      },
    };
    socket.on("data", (chunk: Buffer) => {
      for (const ev of framer.push(chunk)) {
        if (ev.type === "message") handlers.onPacket(ev.bytes, flow);
        else if (ev.type === "ping") flow.send(Buffer.from("\r\n"));
        else {
          handlers.onBadFrame(ev.error, flow, ev.bytes);
          socket.end();
        }
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => sockets.delete(socket));
    return flow;
  };
  const server: Server = createServer((socket) => {
    adopt(socket, { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", handlers.onError);
  const addr = server.address();
  return {
    port: typeof addr === "object" && addr ? addr.port : port,
    get connections() {
      return sockets.size;
    },
    connect: (address, rport) => adopt(connect({ host: address, port: rport }), { address, port: rport }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
