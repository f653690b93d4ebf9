// Members' packets from the UDP socket to the receivers, decrypted as Discord's clients send them:
// the transport cipher over the header (and the extension preamble), the header extension's body
// and any RTP padding cut, then DAVE with the member's id. Packets are sealed here with node:crypto
// from the RTP and rtpsize layouts, not with the code under test.
import { createCipheriv, randomBytes } from "node:crypto";
import { NetworkingStatusCode, VoiceConnectionStatus, type VoiceReceiver } from "@discordjs/voice";
import { describe, expect, it } from "vitest";
import { routeReceivedAudio } from "../../../bridges/discord/receive-router.ts";

const SSRC = 0x1234;
const USER = "301";

interface SealOptions {
  /** Header extension body (a multiple of 4 bytes), sent encrypted after the payload's preamble. */
  extension?: Buffer;
  /** RTP padding bytes (the last one counts them). */
  padding?: number;
  nonce?: number;
}

function seal(key: Buffer, payload: Buffer, opts: SealOptions = {}): Buffer {
  const ext = opts.extension;
  const header = Buffer.alloc(ext ? 16 : 12);
  header[0] = 0x80 | (ext ? 0x10 : 0) | (opts.padding ? 0x20 : 0);
  header[1] = 0x78;
  header.writeUInt16BE(7, 2);
  header.writeUInt32BE(960, 4);
  header.writeUInt32BE(SSRC, 8);
  if (ext) {
    header.writeUInt16BE(0xbede, 12);
    header.writeUInt16BE(ext.length / 4, 14);
  }
  const pad = opts.padding ? Buffer.alloc(opts.padding, 0) : Buffer.alloc(0);
  if (opts.padding) pad[pad.length - 1] = opts.padding;
  const plain = Buffer.concat([ext ?? Buffer.alloc(0), payload, pad]);
  const nonce = Buffer.alloc(12);
  nonce.writeUInt32BE(opts.nonce ?? 1, 0);
  const c = createCipheriv("aes-256-gcm", key, nonce);
  c.setAAD(header);
  const body = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([header, body, c.getAuthTag(), nonce.subarray(0, 4)]);
}

function fakeReceiver(key: Buffer, dave?: { decrypt(p: Buffer, user: string): Buffer | null }) {
  const parsed: Buffer[] = [];
  const connectionData = {
    encryptionMode: "aead_aes256_gcm_rtpsize",
    nonceBuffer: Buffer.alloc(12),
    secretKey: new Uint8Array(key),
  };
  const voiceConnection = {
    state: {
      status: VoiceConnectionStatus.Ready,
      networking: { state: { code: NetworkingStatusCode.Ready, dave } },
    },
  };
  const receiver = {
    ssrcMap: new Map([[SSRC, { userId: USER, audioSSRC: SSRC }]]),
    connectionData,
    voiceConnection,
    parsePacket: (msg: Buffer) => {
      parsed.push(msg);
      return Buffer.from("library");
    },
    onUdpMessage: (_: Buffer) => {},
  };
  const heard: Array<[string, Buffer]> = [];
  const failed: Array<[string, string]> = [];
  routeReceivedAudio(receiver as unknown as VoiceReceiver, {
    packet: (u, opus) => heard.push([u, Buffer.from(opus)]),
    undecryptable: (u, err) => failed.push([u, err.message]),
  });
  return {
    receive: (m: Buffer) => receiver.onUdpMessage(m),
    heard,
    failed,
    parsed,
    connectionData,
    voiceConnection,
  };
}

describe("routeReceivedAudio", () => {
  it("hands each member's packet on, decrypted, with the header extension and padding cut", () => {
    const key = randomBytes(32);
    const r = fakeReceiver(key);
    const a = randomBytes(80);
    const b = randomBytes(3);
    const c = randomBytes(120);
    r.receive(seal(key, a));
    r.receive(seal(key, b, { extension: Buffer.from([0x10, 0xff, 0, 0, 0x21, 1, 2, 0]) }));
    r.receive(seal(key, c, { extension: Buffer.from([0x10, 0xff, 0, 0]), padding: 4, nonce: 2 ** 32 - 1 }));
    expect(r.heard).toEqual([
      [USER, a],
      [USER, b],
      [USER, c],
    ]);
    expect(r.failed).toEqual([]);
    expect(r.parsed).toEqual([]);
  });

  it("decrypts DAVE after the transport with the sender's id, and skips what DAVE tolerates", () => {
    const key = randomBytes(32);
    const seen: Array<[string, Buffer]> = [];
    const r = fakeReceiver(key, {
      decrypt: (p, user) => {
        seen.push([user, Buffer.from(p)]);
        return p[0] === 0 ? null : Buffer.concat([Buffer.from("dave:"), p]);
      },
    });
    const inner = Buffer.from([1, 2, 3, 4]);
    r.receive(seal(key, inner, { extension: Buffer.alloc(4) }));
    r.receive(seal(key, Buffer.from([0, 9])));
    expect(seen).toEqual([
      [USER, inner],
      [USER, Buffer.from([0, 9])],
    ]);
    expect(r.heard).toEqual([[USER, Buffer.concat([Buffer.from("dave:"), inner])]]);
    // A DAVE failure beyond the library's tolerance (it throws) is counted, not fatal.
    const failing = fakeReceiver(key, {
      decrypt: () => {
        throw new Error("no key for this epoch");
      },
    });
    failing.receive(seal(key, inner));
    expect(failing.failed).toEqual([[USER, "no key for this epoch"]]);
  });

  it("leaves DAVE out while the connection is not carrying media", () => {
    const key = randomBytes(32);
    const r = fakeReceiver(key, { decrypt: () => Buffer.from("dave") });
    (r.voiceConnection.state as { status: string }).status = VoiceConnectionStatus.Connecting;
    const p = randomBytes(10);
    r.receive(seal(key, p));
    expect(r.heard).toEqual([[USER, p]]);
  });

  it("counts a packet that does not authenticate, and ignores unknown senders, keep-alives and non-Opus", () => {
    const key = randomBytes(32);
    const r = fakeReceiver(key);
    const bad = seal(key, randomBytes(50));
    bad[20]! ^= 1;
    r.receive(bad);
    expect(r.failed).toHaveLength(1);
    expect(r.failed[0]![1]).toMatch(/transport decryption failed/);
    r.receive(seal(randomBytes(32), randomBytes(50)));
    expect(r.failed).toHaveLength(2);
    const stranger = seal(key, randomBytes(50));
    stranger.writeUInt32BE(999, 8);
    r.receive(stranger);
    r.receive(Buffer.alloc(8));
    const rtcp = seal(key, randomBytes(50));
    rtcp[1] = 200;
    r.receive(rtcp);
    expect(r.heard).toEqual([]);
    expect(r.failed).toHaveLength(2);
  });

  it("leaves other transport modes to the library's parser", () => {
    const key = randomBytes(32);
    const r = fakeReceiver(key);
    r.connectionData.encryptionMode = "aead_xchacha20_poly1305_rtpsize";
    const m = seal(key, randomBytes(20));
    r.receive(m);
    expect(r.parsed).toEqual([m]);
    expect(r.heard).toEqual([[USER, Buffer.from("library")]]);
  });
});
