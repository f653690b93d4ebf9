// Members' voice straight from the voice connection's UDP socket to their receivers: the library's
// per-packet path (VoiceReceiver.onUdpMessage) re-arms a speaking timer and pushes every packet
// through a Readable stream per member; this takes its place and hands each decrypted Opus packet
// to one callback. Decryption (transport, then DAVE, with the library's tolerance of failures during
// transitions) stays the library's own.
//
// onUdpMessage is a public method the library binds to each new UDP socket it opens (connect,
// resume, rejoin, a moved voice server) by reading the property at that time: replacing it on the
// instance before the first socket exists routes every socket of the connection here.
import { RTP_OPUS_PAYLOAD_TYPE, type VoiceReceiver } from "@discordjs/voice";

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

export function routeReceivedAudio(receiver: VoiceReceiver, handlers: ReceiveHandlers): void {
  const parse = (receiver as unknown as { parsePacket: ParsePacket }).parsePacket.bind(receiver);
  receiver.onUdpMessage = (msg: Buffer) => {
    // 8 bytes is the UDP keep-alive; RTP with a 12-byte header comes longer.
    if (msg.length <= 12) return;
    const user = receiver.ssrcMap.get(msg.readUInt32BE(8));
    if (!user) return;
    const { encryptionMode, nonceBuffer, secretKey } = receiver.connectionData;
    if (!encryptionMode || !nonceBuffer || !secretKey) return;
    if ((msg[1]! & 0x7f) !== RTP_OPUS_PAYLOAD_TYPE || msg[0]! >> 6 !== 2) return;
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
}
