// The agent's packets as the voice server reads them: opened with the fake's own implementation of
// the transport encryption (written from Discord's documentation, not from the library), with the
// RTP fields and the nonce counter stepping as the library's own path steps them.
import { randomBytes } from "node:crypto";
import { NetworkingStatusCode, type VoiceConnection, VoiceConnectionStatus } from "@discordjs/voice";
import { describe, expect, it } from "vitest";
import { sendOpusPacket } from "../../../bridges/discord/packet-out.ts";
import { AES_GCM_MODE, openRtp } from "../../fake-discord/transport-crypto.ts";

function readyConnection(secretKey: Uint8Array) {
  const sent: Buffer[] = [];
  const speaking: boolean[] = [];
  const connectionData = {
    connectedClients: new Set<string>(),
    encryptionMode: AES_GCM_MODE as string,
    nonce: 2 ** 32 - 2,
    nonceBuffer: Buffer.alloc(12),
    packetsPlayed: 0,
    secretKey,
    sequence: 65534,
    speaking: false,
    ssrc: 0xdeadbeef,
    timestamp: 2 ** 32 - 960,
  };
  const networking = {
    state: { code: NetworkingStatusCode.Ready, connectionData, udp: { send: (b: Buffer) => sent.push(b) } },
    setSpeaking: (on: boolean) => speaking.push(on),
  };
  const connection = { state: { status: VoiceConnectionStatus.Ready, networking } };
  return { connection: connection as unknown as VoiceConnection, sent, speaking, connectionData };
}

describe("sendOpusPacket", () => {
  it("sends packets the voice server opens, sequence, timestamp and nonce wrapping as Discord's do", () => {
    const key = randomBytes(32);
    const { connection, sent, speaking, connectionData } = readyConnection(key);
    const opus = [randomBytes(90), randomBytes(3), randomBytes(160)];
    for (const p of opus) expect(sendOpusPacket(connection, p)).toBe(true);
    const opened = sent.map((b) => openRtp(AES_GCM_MODE, key, b));
    expect(opened.map((o) => Buffer.from(o.payload))).toEqual(opus);
    expect(opened.map((o) => o.sequence)).toEqual([65534, 65535, 0]);
    expect(opened.map((o) => o.timestamp)).toEqual([2 ** 32 - 960, 0, 960]);
    expect(opened.map((o) => o.ssrc)).toEqual([0xdeadbeef, 0xdeadbeef, 0xdeadbeef]);
    expect(sent.map((b) => b.readUInt32BE(b.length - 4))).toEqual([2 ** 32 - 1, 0, 1]);
    expect(connectionData.packetsPlayed).toBe(3);
    expect(speaking[0]).toBe(true);
    // A packet altered on the way does not open.
    const bad = Buffer.from(sent[0]!);
    bad[14]! ^= 1;
    expect(() => openRtp(AES_GCM_MODE, key, bad)).toThrow();
  });

  it("sends nothing while the connection is not ready", () => {
    const { connection, sent } = readyConnection(randomBytes(32));
    (connection.state as { status: string }).status = VoiceConnectionStatus.Connecting;
    expect(sendOpusPacket(connection, randomBytes(20))).toBe(false);
    expect(sent).toHaveLength(0);
  });
});
