// SIP over UDP: one socket, one datagram per message; answers go back to the datagram's source.
import { createSocket, type Socket } from "node:dgram";
import type { PacketHandler, SipFlow } from "./flow.ts";

export interface UdpTransport {
  readonly port: number;
  readonly address: string;
  /** A flow to an address we have not heard from (an in-dialog request to a new target). */
  flowTo(address: string, port: number): SipFlow;
  close(): Promise<void>;
}

export async function listenUdp(
  host: string,
  port: number,
  onPacket: PacketHandler,
  onError: (err: Error) => void,
): Promise<UdpTransport> {
  const socket: Socket = createSocket({ type: "udp4", reuseAddr: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(port, host, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  socket.on("error", onError);
  const bound = socket.address();
  const local = { address: bound.address, port: bound.port };
  const flowTo = (address: string, rport: number): SipFlow => ({
    transport: "UDP",
    remote: { address, port: rport },
    local,
    reliable: false,
    usable: true,
    send: (bytes) => socket.send(bytes, rport, address, (err) => err && onError(err)),
  });
  socket.on("message", (bytes, rinfo) => onPacket(bytes, flowTo(rinfo.address, rinfo.port)));
  return {
    port: bound.port,
    address: bound.address,
    flowTo,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
