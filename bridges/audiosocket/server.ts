// The AudioSocket entry: a TCP server Asterisk connects to, one call per connection
// (dialplan `AudioSocket(uuid,host:port)` or `Dial(AudioSocket/host:port/uuid)`).
import { createServer, type Socket } from "node:net";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { AudioSocketCallTransport } from "./call-transport.ts";
import { AsteriskConnection, type ConnectionLimits } from "./connection.ts";
import { type AudioSocketStats, newStats } from "./stats.ts";

export interface AudioSocketServerOptions {
  host: string;
  /** 0 for an ephemeral port. */
  port: number;
  log: Logger;
  clock: Clock;
  /** A call is ready (UUID and rate known): start its session on `transport`. */
  onCall(transport: AudioSocketCallTransport): void;
  /** Overrides of the connection limits (defaults below). */
  limits?: Partial<ConnectionLimits>;
  /** Outbound lead ahead of Asterisk's playout, ms (default 60). */
  leadMs?: number;
  /** Most connections open at once (default 2000). */
  maxConnections?: number;
}

export interface AudioSocketServer {
  readonly port: number;
  /** Stops listening and ends every open connection (their sessions see `ended`). */
  close(): Promise<void>;
  /** A snapshot of the counters. */
  readonly stats: AudioSocketStats;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  handshakeTimeoutMs: 5000,
  audioWaitMs: 1000,
  idleTimeoutMs: 10_000,
  maxAheadMs: 1000,
  maxBadFrames: 32,
};

export async function startAudioSocketServer(opts: AudioSocketServerOptions): Promise<AudioSocketServer> {
  const stats = newStats();
  const limits: ConnectionLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const log = opts.log.child({ transport: "audiosocket" });
  const open = new Set<AsteriskConnection>();
  const server = createServer((socket: Socket) => {
    stats.connections++;
    stats.active++;
    const conn = new AsteriskConnection({
      socket,
      log: log.child({ remote: `${socket.remoteAddress}:${socket.remotePort}` }),
      clock: opts.clock,
      limits,
      stats,
      ...(opts.leadMs !== undefined ? { leadMs: opts.leadMs } : {}),
      onCall: opts.onCall,
      onClose: () => {
        stats.active--;
        open.delete(conn);
      },
    });
    open.add(conn);
  });
  server.maxConnections = opts.maxConnections ?? 2000;
  server.on("drop", (data) =>
    log.warn({ remote: data?.remoteAddress }, "connection refused: maxConnections reached"),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => log.error({ err }, "AudioSocket server error"));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  log.info({ host: opts.host, port }, "AudioSocket server listening");

  return {
    port,
    get stats() {
      return { ...stats };
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const conn of [...open]) conn.close("server closing");
        log.info("AudioSocket server closed");
      });
    },
  };
}
