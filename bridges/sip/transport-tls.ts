// SIP over TLS (RFC 3261 §26.3.1, RFC 5630): the TCP transport's framing over node:tls. The
// certificate and key are PEM files, read again on reload() (SIGHUP) so a renewed certificate
// takes effect without a restart; connections already open keep theirs. Outgoing connections
// (registrations, in-dialog requests once the caller's connection closed) verify the peer's chain
// and name unless verification is turned off.
import { readFile } from "node:fs/promises";
import { isIP } from "node:net";
import {
  checkServerIdentity,
  connect,
  createSecureContext,
  createServer,
  type PeerCertificate,
  type Server,
} from "node:tls";
import { StreamConnections, type TcpHandlers, type TcpTransport } from "./transport-tcp.ts";

export interface TlsFiles {
  readonly cert: string;
  readonly key: string;
}

export interface TlsTransport extends TcpTransport {
  /** Reads the certificate and key again; on error the old ones stay (and the error is thrown). */
  reload(): Promise<void>;
}

/** The PEM pair, checked (a bad file is an error here, not a failed handshake later). */
async function pem(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  const [cert, key] = await Promise.all([readFile(files.cert), readFile(files.key)]);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new Error(`SIP TLS certificate ${files.cert} / key ${files.key}: ${(err as Error).message}`);
  }
  return { cert, key };
}

export async function listenTls(
  host: string,
  port: number,
  files: TlsFiles,
  verify: boolean,
  handlers: TcpHandlers,
): Promise<TlsTransport> {
  const conns = new StreamConnections("TLS", handlers);
  // A peer that connects and never finishes the handshake (a scanner) is dropped after 5 s.
  const server: Server = createServer({ ...(await pem(files)), handshakeTimeout: 5_000 }, (socket) => {
    conns.adopt(socket, { address: socket.remoteAddress ?? "", port: socket.remotePort ?? 0 });
  });
  // A handshake that fails (a scanner, garbage) closes that socket only; with a listener here
  // Node leaves closing it to us.
  server.on("tlsClientError", (_err, socket) => socket.destroy());
  const bound = await conns.listen(server, host, port);
  return {
    port: bound,
    get connections() {
      return conns.sockets.size;
    },
    connect: (address, rport, name) => {
      const servername = name ?? address;
      const socket = connect({
        host: address,
        port: rport,
        rejectUnauthorized: verify,
        // The name the certificate must carry: the registrar's host name when we were given one.
        ...(isIP(servername) ? {} : { servername }),
        ...(isIP(servername) && verify ? { checkServerIdentity: checkIp(servername) } : {}),
      });
      return conns.adopt(socket, { address, port: rport });
    },
    reload: async () => {
      server.setSecureContext(await pem(files));
    },
    close: () => conns.close(server),
  };
}

/** An address dialled by number: the certificate must name that IP (its subjectAltName). */
function checkIp(ip: string): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => checkServerIdentity(ip, cert);
}
