// The fake voice server against the unmodified @discordjs/voice (no bot code): with DAVE on, the
// library's audio reaches a simulated member, a member's speech reaches the library's receiver,
// and a member joining later (a DAVE transition) hears it too. Speech is espeak-ng's.
import { Readable } from "node:stream";
import {
  createAudioPlayer,
  createAudioResource,
  entersState,
  joinVoiceChannel,
  StreamType,
  VoiceConnectionStatus,
} from "@discordjs/voice";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpusCodec } from "../../codecs/opus.ts";
import { levelDbfs } from "../../codecs/pcm.ts";
import { speak } from "../helpers/speech.ts";
import { SimMember } from "./member.ts";
import { trustTestCertificate } from "./tls.ts";
import { FakeVoiceServer } from "./voice-server.ts";

const GUILD = "100000000000000001";
const CHANNEL = "100000000000000002";
const BOT = "100000000000000003";
let server: FakeVoiceServer;

beforeAll(async () => {
  server = new FakeVoiceServer(trustTestCertificate());
  await server.listen();
});
afterAll(async () => {
  await server.close();
});

async function until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Opus packets of a 440 Hz tone, 20 ms each, 48 kHz stereo as Discord clients send. */
function tonePackets(seconds: number): Buffer[] {
  const codec = new OpusCodec(48000, 2);
  const packets: Buffer[] = [];
  for (let f = 0; f < seconds * 50; f++) {
    const pcm = new Int16Array(1920);
    for (let i = 0; i < 960; i++) {
      const s = Math.round(8000 * Math.sin((2 * Math.PI * 440 * (f * 960 + i)) / 48000));
      pcm[2 * i] = s;
      pcm[2 * i + 1] = s;
    }
    packets.push(Buffer.from(codec.encode(pcm)));
  }
  return packets;
}

describe("the fake voice server with @discordjs/voice", () => {
  it("carries audio both ways under DAVE, across a member joining mid-way", async () => {
    const alice = new SimMember({
      userId: "200000000000000001",
      name: "Alice",
      ssrc: 1111,
      channelId: CHANNEL,
    });
    const grant = {
      guildId: GUILD,
      channelId: CHANNEL,
      userId: BOT,
      sessionId: "s1",
      token: "voice-token-1",
    };
    server.grant(grant);
    const connection = joinVoiceChannel({
      guildId: GUILD,
      channelId: CHANNEL,
      selfDeaf: false,
      adapterCreator: (methods) => ({
        sendPayload(payload) {
          if ((payload as { op: number }).op === 4) {
            setImmediate(() => {
              methods.onVoiceStateUpdate({
                session_id: grant.sessionId,
                user_id: BOT,
                channel_id: CHANNEL,
                guild_id: GUILD,
              } as never);
              methods.onVoiceServerUpdate({
                token: grant.token,
                guild_id: GUILD,
                endpoint: `127.0.0.1:${server.port}`,
              });
            });
          }
          return true;
        },
        destroy() {},
      }),
    });
    try {
      await entersState(connection, VoiceConnectionStatus.Ready, 10_000);
      const conn = server.connectionFor(GUILD)!;
      expect(conn.daveVersion).toBe(1);
      conn.addMember(alice);
      await until(() => conn.settled && alice.dave.ready, "Alice in the DAVE group");

      // The library plays raw Opus; Alice hears a tone.
      const player = createAudioPlayer();
      connection.subscribe(player);
      player.play(createAudioResource(Readable.from(tonePackets(1)), { inputType: StreamType.Opus }));
      await until(() => alice.heard.length >= 40, "Alice hearing the bot");
      expect(alice.undecryptable).toBe(0);
      expect(levelDbfs(alice.heardPcm())).toBeGreaterThan(-30);

      // Alice speaks; the library's receiver gets her Opus, DAVE-decrypted.
      const got: Buffer[] = [];
      const stream = connection.receiver.subscribe(alice.userId);
      stream.on("data", (p: Buffer) => got.push(p));
      await alice.say(speak("Hello there, this is Alice.", { rate: 48000 }));
      await until(() => got.length >= 40, "the receiver hearing Alice");
      const decoder = new OpusCodec(48000, 1);
      const pcm = Int16Array.from(got.flatMap((p) => [...decoder.decode(p)]));
      expect(levelDbfs(pcm)).toBeGreaterThan(-40);

      // Bob joins mid-way: a new epoch; both hear the bot.
      const bob = new SimMember({
        userId: "200000000000000002",
        name: "Bob",
        ssrc: 2222,
        channelId: CHANNEL,
      });
      conn.addMember(bob);
      await until(() => conn.settled && bob.dave.ready, "Bob in the DAVE group");
      const aliceBefore = alice.heard.length;
      player.play(createAudioResource(Readable.from(tonePackets(1)), { inputType: StreamType.Opus }));
      await until(() => bob.heard.length >= 40 && alice.heard.length >= aliceBefore + 40, "both hearing");
      expect(bob.undecryptable + alice.undecryptable).toBe(0);
      expect(alice.dave.voicePrivacyCode).toBe(bob.dave.voicePrivacyCode);
      expect(alice.dave.voicePrivacyCode).not.toBe("");
    } finally {
      connection.destroy();
    }
  });
});
