// Members' voice straight from the voice connection's UDP socket to their receivers: the library's
// per-packet path (VoiceReceiver.onUdpMessage) re-arms a speaking timer and pushes every packet
// through a Readable stream per member; this takes its place and hands each decrypted Opus packet
// to one callback. Decryption (transport, then DAVE, with the library's tolerance of failures during
// transitions) stays the library's own.
//
// onUdpMessage is a public method the library binds to each new UDP socket it opens (connect,
// resume, rejoin, a moved voice server) by reading the property at that time: replacing it on the
// instance before the first socket exists routes every socket of the connection here. Each socket
// gets a wider receive buffer and is read once per 20 ms tick while packets flow (udp-batching.ts).
import type { Socket } from "node:dgram";
import {
  NetworkingStatusCode,
  RTP_OPUS_PAYLOAD_TYPE,
  type VoiceConnection,
  VoiceConnectionStatus,
  type VoiceReceiver,
} from "@discordjs/voice";
import { UdpBatching } from "./udp-batching.ts";

/**
 * Receive buffer asked for the connection's UDP socket. Every member's packets queue there between
 * ticks and while the event loop is busy; Linux's default (about 200 KB, some 200 packets) is a
 * fraction of a second of a busy channel, and what does not fit is dropped. The kernel caps it at
 * net.core.rmem_max.
 */
const RECEIVE_BUFFER_BYTES = 4 << 20;

export interface ReceiveHandlers {
  /** One member's Opus packet, transport- and DAVE-decrypted. */
  packet(userId: string, opus: Buffer): void;
  /** A packet that could not be decrypted (beyond what the library tolerates during transitions). */
  undecryptable(userId: string, err: Error): void;
}

/** VoiceReceiver's packet parser: private in its types, the one the library itself runs per packet. */
type ParsePacket = (
  msg: Buffer,
  mode: string,
  nonce: Buffer,
  secretKey: Uint8Array,
  userId: string,
) => Buffer | null | undefined;

export function routeReceivedAudio(connection: VoiceConnection, handlers: ReceiveHandlers): void {
  const receiver: VoiceReceiver = connection.receiver;
  const parse = (receiver as unknown as { parsePacket: ParsePacket }).parsePacket.bind(receiver);
  let batching: UdpBatching | undefined;
  receiver.onUdpMessage = (msg: Buffer) => {
    // 8 bytes is the UDP keep-alive; RTP with a 12-byte header comes longer.
    if (msg.length <= 12) return;
    const user = receiver.ssrcMap.get(msg.readUInt32BE(8));
    if (!user) return;
    const { encryptionMode, nonceBuffer, secretKey } = receiver.connectionData;
    if (!encryptionMode || !nonceBuffer || !secretKey) return;
    if ((msg[1]! & 0x7f) !== RTP_OPUS_PAYLOAD_TYPE || msg[0]! >> 6 !== 2) return;
    batching?.packet();
    let opus: Buffer | null | undefined;
    try {
      opus = parse(msg, encryptionMode, nonceBuffer, secretKey, user.userId);
    } catch (err) {
      handlers.undecryptable(user.userId, err as Error);
      return;
    }
    // null: a DAVE failure the library tolerates (a transition in progress).
    if (opus && opus.length > 0) handlers.packet(user.userId, opus);
  };
  // Each new socket (the library opens one per voice session: connect, rejoin, moved server).
  let tuned: Socket | undefined;
  const tune = () => {
    const state = connection.state;
    if (state.status === VoiceConnectionStatus.Destroyed) {
      batching?.close();
      batching = undefined;
      return;
    }
    if (state.status !== VoiceConnectionStatus.Ready) return;
    const net = state.networking.state;
    if (net.code !== NetworkingStatusCode.Ready) return;
    // The library's own socket (private in its types); if it cannot be reached, defaults stay.
    const socket = (net.udp as unknown as { socket?: Socket }).socket;
    if (!socket || socket === tuned) return;
    tuned = socket;
    batching?.close();
    try {
      socket.setRecvBufferSize(RECEIVE_BUFFER_BYTES);
    } catch {
      // Refused: the default buffer stays.
    }
    batching = UdpBatching.of(socket);
    socket.once("close", () => batching?.close());
  };
  connection.on("stateChange", tune);
}
