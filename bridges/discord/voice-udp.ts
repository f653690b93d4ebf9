// The voice connection's UDP socket, set up for a call's packet rate once the library has it ready
// (at each Ready: connect, resume, a moved voice server). The socket is the library's own (private in
// its types); if it cannot be reached, the library's defaults stay and everything still works.
//
// - A wider receive buffer: every member's packets queue there while the event loop is busy;
//   Linux's default (about 200 KB, some 200 packets) is a fraction of a second of a busy channel,
//   and what does not fit is dropped. The kernel caps it at net.core.rmem_max.
// - Connected to the voice server: the library sends each packet with the server's address, and
//   node:dgram then resolves that address (an IP, but still a lookup and a deferred send through
//   process.nextTick) for every packet, 50 a second per channel. A connected socket sends at once.
//   IP discovery is over by Ready, and the server answers from the address it is sent to, so
//   nothing else changes for the socket.
// - Read once per tick of the voice clock while members' packets flow (udp-tick-reads.ts).
import type { Socket } from "node:dgram";
import { NetworkingStatusCode, type VoiceConnection, VoiceConnectionStatus } from "@discordjs/voice";
import { UdpTickReads } from "./udp-tick-reads.ts";

const RECEIVE_BUFFER_BYTES = 4 << 20;

/** The library's VoiceUDPSocket, as far as this reads and replaces it. */
interface LibraryUdp {
  socket?: Socket;
  remote?: { ip: string; port: number };
  send(buffer: Buffer): void;
}

/** The connection's current socket as the receive path drives it. */
export interface VoiceUdpReads {
  /** A member's packet was read from the socket (reading goes to once per tick). */
  packetRead(): void;
  /** Reads as packets come again (the conversation ended). */
  close(): void;
}

/**
 * Tunes each socket the connection opens. `afterRead` runs after each tick's reading of the socket,
 * in the same turn of the loop: what it read is to be handled then.
 */
export function tuneVoiceUdp(connection: VoiceConnection, afterRead: () => void): VoiceUdpReads {
  const tuned = new WeakSet<object>();
  let reads: UdpTickReads | undefined;
  let closed = false;
  const stop = () => {
    closed = true;
    reads?.close();
    reads = undefined;
  };
  const tune = () => {
    const state = connection.state;
    if (state.status === VoiceConnectionStatus.Destroyed) {
      stop();
      return;
    }
    if (state.status !== VoiceConnectionStatus.Ready) return;
    const net = state.networking.state;
    if (net.code !== NetworkingStatusCode.Ready) return;
    const udp = net.udp as unknown as LibraryUdp;
    const socket = udp.socket;
    if (!socket || tuned.has(socket)) return;
    tuned.add(socket);
    try {
      socket.setRecvBufferSize(RECEIVE_BUFFER_BYTES);
    } catch {
      // Not bound yet or refused: the default buffer stays.
    }
    connectToServer(udp, socket);
    // A new socket (a resume, a moved voice server): the old one's reading is over.
    reads?.close();
    const mine = closed
      ? undefined
      : UdpTickReads.of(socket, {
          // The connection's receive router (receive-router.ts), as libuv's reads reach it.
          deliver: (msg) => connection.receiver.onUdpMessage(msg),
          afterRead,
        });
    reads = mine;
    if (mine) socket.once("close", () => mine.close());
  };
  connection.on("stateChange", tune);
  tune();
  return { packetRead: () => reads?.packet(), close: stop };
}

function connectToServer(udp: LibraryUdp, socket: Socket): void {
  const remote = udp.remote;
  if (!remote) return;
  const { ip, port } = remote;
  let connected = false;
  // Until the socket is connected, packets go as before, addressed; from then on, unaddressed (a
  // connected socket refuses an address). Both switch in the same round of process.nextTick, before
  // any timer could send.
  udp.send = (buffer) => {
    if (connected) socket.send(buffer);
    else socket.send(buffer, port, ip);
  };
  try {
    socket.connect(port, ip, () => {
      connected = true;
    });
  } catch {
    // Already connected or closed: addressed sends stay.
  }
}
