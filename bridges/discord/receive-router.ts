// Members' voice straight from the voice connection's UDP socket to their receivers: the library's
// per-packet path (VoiceReceiver.onUdpMessage) re-arms a speaking timer and pushes every packet
// through a Readable stream per member; this takes its place and hands each decrypted Opus packet
// to one callback.
//
// Transport decryption in aead_aes256_gcm_rtpsize is our own (transport-aead.ts: one cipher context
// per session key, the packet decrypted in place), then the RTP padding and header extension are
// cut and DAVE decrypts through the connection's DAVE session, with the library's tolerance of
// failures during transitions, exactly as VoiceReceiver.parsePacket does it. Any other transport
// mode (XChaCha20-Poly1305) goes through the library's parsePacket.
//
// onUdpMessage is a public method the library binds to each new UDP socket it opens (connect,
// resume, rejoin, a moved voice server) by reading the property at that time: replacing it on the
// instance before the first socket exists routes every socket of the connection here.
import {
  NetworkingStatusCode,
  RTP_OPUS_PAYLOAD_TYPE,
  type VoiceConnection,
  VoiceConnectionStatus,
  type VoiceReceiver,
} from "@discordjs/voice";
import { AES_GCM_RTPSIZE, transportAead } from "./transport-aead.ts";

export interface ReceiveHandlers {
  /** One member's Opus packet, transport- and DAVE-decrypted (a view into the received datagram). */
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

/** The connection's DAVE session as the library's receive path uses it. */
interface DaveDecrypt {
  /** The packet, DAVE-decrypted (or as is when DAVE does not apply), or null for a tolerated failure. */
  decrypt(packet: Buffer, userId: string): Buffer | null;
}

const RTP_HEADER = 12;
const EXTENSION_PREAMBLE = 4;

/** The DAVE session whenever the library would decrypt with it (networking Ready or Resuming). */
function daveOf(connection: VoiceConnection): DaveDecrypt | undefined {
  const state = connection.state;
  if (state.status !== VoiceConnectionStatus.Ready) return undefined;
  const net = state.networking.state;
  if (net.code !== NetworkingStatusCode.Ready && net.code !== NetworkingStatusCode.Resuming) return undefined;
  return (net.dave ?? undefined) as DaveDecrypt | undefined;
}

export function routeReceivedAudio(receiver: VoiceReceiver, handlers: ReceiveHandlers): void {
  const parse = (receiver as unknown as { parsePacket: ParsePacket }).parsePacket.bind(receiver);
  const connection = receiver.voiceConnection;
  const transportFailed = new Error("transport decryption failed (the packet did not authenticate)");
  receiver.onUdpMessage = (msg: Buffer) => {
    // 8 bytes is the UDP keep-alive; RTP with a 12-byte header comes longer.
    if (msg.length <= RTP_HEADER) return;
    const user = receiver.ssrcMap.get(msg.readUInt32BE(8));
    if (!user) return;
    const { encryptionMode, nonceBuffer, secretKey } = receiver.connectionData;
    if (!encryptionMode || !nonceBuffer || !secretKey) return;
    const first = msg[0]!;
    if ((msg[1]! & 0x7f) !== RTP_OPUS_PAYLOAD_TYPE || first >> 6 !== 2) return;
    let opus: Buffer | null | undefined;
    if (encryptionMode !== AES_GCM_RTPSIZE) {
      try {
        opus = parse(msg, encryptionMode, nonceBuffer, secretKey, user.userId);
      } catch (err) {
        handlers.undecryptable(user.userId, err as Error);
        return;
      }
    } else {
      const extension = (first & 0x10) !== 0;
      const headerSize = RTP_HEADER + (extension ? EXTENSION_PREAMBLE : 0);
      const length = transportAead(secretKey).open(msg, headerSize);
      if (length < 0) {
        handlers.undecryptable(user.userId, transportFailed);
        return;
      }
      let start = headerSize;
      let end = headerSize + length;
      // RTP padding (RFC 3550 §5.1): its last byte counts the bytes to drop.
      if (first & 0x20 && length > 0) {
        const pad = msg[end - 1]!;
        if (pad < length) end -= pad;
      }
      // The header extension's body (its length in 32-bit words is in the preamble) was encrypted
      // with the payload and comes first in the plaintext.
      if (extension) start = Math.min(end, start + 4 * msg.readUInt16BE(RTP_HEADER + 2));
      opus = msg.subarray(start, end);
      const dave = daveOf(connection);
      if (dave) {
        try {
          opus = dave.decrypt(opus, user.userId);
        } catch (err) {
          handlers.undecryptable(user.userId, err as Error);
          return;
        }
      }
    }
    // null: a DAVE failure the library tolerates (a transition in progress).
    if (opus && opus.length > 0) handlers.packet(user.userId, opus);
  };
}
