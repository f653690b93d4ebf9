// One Opus packet of the agent's voice out through a ready voice connection, as @discordjs/voice's
// Networking does it (prepareAudioPacket + dispatchAudio: DAVE, then the transport's AES-256-GCM over
// the 12-byte RTP header, the 4-byte nonce at the end; then sequence +1, timestamp +960), with the
// packet built in one buffer: the library's path allocates a header, a nonce copy and two
// concatenations per packet through four calls, 50 times a second per channel, and a new AES-GCM
// cipher for each (transport-aead.ts keeps one per session key). The library's own path still
// serves any other transport mode (XChaCha20-Poly1305, which needs its sodium backend).
import { Buffer } from "node:buffer";
import {
  NetworkingStatusCode,
  RTP_OPUS_PAYLOAD_TYPE,
  type VoiceConnection,
  VoiceConnectionStatus,
} from "@discordjs/voice";
import { AEAD_TRAILER, AES_GCM_RTPSIZE, transportAead } from "./transport-aead.ts";

const RTP_HEADER = 12;
/** 20 ms at 48 kHz: the RTP clock of Discord's Opus. */
const TIMESTAMP_STEP = 960;
const MAX_NONCE = 2 ** 32 - 1;

/** Sends `opus` now; false if the connection is not ready to carry it (nothing was sent). */
export function sendOpusPacket(connection: VoiceConnection, opus: Buffer): boolean {
  const state = connection.state;
  if (state.status !== VoiceConnectionStatus.Ready) return false;
  const networking = state.networking;
  const net = networking.state;
  if (net.code !== NetworkingStatusCode.Ready) return false;
  const data = net.connectionData;
  if (data.encryptionMode !== AES_GCM_RTPSIZE) {
    if (!connection.prepareAudioPacket(opus)) return false;
    return connection.dispatchAudio() ?? false;
  }
  const payload = net.dave ? net.dave.encrypt(opus) : opus;
  data.nonce = data.nonce >= MAX_NONCE ? 0 : data.nonce + 1;
  const out = Buffer.allocUnsafe(RTP_HEADER + payload.length + AEAD_TRAILER);
  out[0] = 0x80;
  out[1] = RTP_OPUS_PAYLOAD_TYPE;
  out.writeUInt16BE(data.sequence, 2);
  out.writeUInt32BE(data.timestamp, 4);
  out.writeUInt32BE(data.ssrc, 8);
  transportAead(data.secretKey).seal(out, RTP_HEADER, payload, data.nonce);
  data.packetsPlayed++;
  data.sequence = (data.sequence + 1) & 0xffff;
  data.timestamp = (data.timestamp + TIMESTAMP_STEP) % 2 ** 32;
  networking.setSpeaking(true);
  net.udp.send(out);
  return true;
}
