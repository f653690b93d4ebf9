// A fake Discord for tests: REST, the gateway and a voice server that follow Discord's
// published protocol, with a real DAVE session and simulated members who speak and listen.
// The real bot runs against it unmodified, through DISCORD_API_BASE = `fake.apiBase`.
//
//   const fake = await startFakeDiscord({ token });
//   fake.gateway.interaction("join", fake.guild.id, fake.humans[0])   // /join as that member
//   const alice = fake.addMember("Alice")                              // sits in the voice channel
//   await alice.say(pcm48k)                                            // speaks into it
//   alice.heard, alice.agentSpans()                                    // what it heard of the bot
//   fake.voice.connectionFor(guildId)?.close(4015)                     // voice server crash

import { FakeGateway } from "./gateway.ts";
import { SimMember } from "./member.ts";
import { trustTestCertificate } from "./tls.ts";
import { FakeVoiceServer } from "./voice-server.ts";
import type { FakeUser } from "./world.ts";
import { type FakeChannel, type FakeGuild, snowflake } from "./world.ts";

export { FakeGateway } from "./gateway.ts";
export { SimMember } from "./member.ts";
export type { FakeGuild, FakeUser } from "./world.ts";

export interface FakeDiscord {
  readonly gateway: FakeGateway;
  readonly voice: FakeVoiceServer;
  /** The first guild and its voice and text channels. */
  readonly guild: FakeGuild;
  readonly voiceChannel: FakeChannel;
  readonly apiBase: string;
  /** The test certificate's path, for a bot run as a child process (NODE_EXTRA_CA_CERTS). */
  readonly certPath: string;
  /** A member who joins the voice channel (and speaks and listens in it). */
  addMember(name: string, guild?: FakeGuild): SimMember;
  /** The member leaves the voice channel. */
  removeMember(member: SimMember, guild?: FakeGuild): void;
  close(): Promise<void>;
}

export interface FakeDiscordOptions {
  token: string;
  /** Guilds (each with a voice and a text channel); default 1. */
  guilds?: number;
  shardCount?: number;
  /** Permissions the bot is denied in the voice channels (a misconfigured server). */
  denyBotInVoice?: bigint;
}

export async function startFakeDiscord(opts: FakeDiscordOptions): Promise<FakeDiscord> {
  const cert = trustTestCertificate();
  const voice = new FakeVoiceServer(cert);
  await voice.listen();
  const guilds: FakeGuild[] = Array.from({ length: opts.guilds ?? 1 }, (_, i) => ({
    id: snowflake(),
    name: `Test Server ${i + 1}`,
    channels: [
      {
        id: snowflake(),
        name: "General",
        type: 2,
        ...(opts.denyBotInVoice ? { denyBot: opts.denyBotInVoice } : {}),
      },
      { id: snowflake(), name: "general", type: 0 },
    ],
    members: [{ id: snowflake(), username: `owner${i + 1}` }],
    voice: new Map(),
  }));
  const gateway = new FakeGateway({
    token: opts.token,
    guilds,
    voice,
    ...(opts.shardCount ? { shardCount: opts.shardCount } : {}),
  });
  await gateway.listen();
  const guild = guilds[0]!;
  const voiceOf = (g: FakeGuild) => g.channels.find((c) => c.type === 2)!;
  let ssrc = 5000;
  return {
    gateway,
    voice,
    guild,
    voiceChannel: voiceOf(guild),
    apiBase: gateway.apiBase,
    certPath: cert.certPath,
    addMember(name, g = guild) {
      const channel = voiceOf(g);
      const user: FakeUser = { id: snowflake(), username: name };
      g.members.push(user);
      const member = new SimMember({ userId: user.id, name, ssrc: ++ssrc, channelId: channel.id });
      gateway.memberVoice(g.id, user, channel.id);
      voice.waiting(g.id, member);
      voice.connectionFor(g.id)?.addMember(member);
      return member;
    },
    removeMember(member, g = guild) {
      const user = g.members.find((u) => u.id === member.userId);
      if (user) gateway.memberVoice(g.id, user, null);
      voice.left(g.id, member);
    },
    async close() {
      await gateway.close();
      await voice.close();
    },
  };
}
