// Permission checks on discord.js's own guild model, built from gateway-shaped data (as GUILD_CREATE
// delivers it), so the effective permissions come from roles and overwrites exactly as in the bot.
import {
  ChannelType,
  Client,
  type Guild,
  OverwriteType,
  PermissionFlagsBits,
  type VoiceChannel,
} from "discord.js";
import { afterAll, describe, expect, it } from "vitest";
import {
  invitePermissions,
  missingVoicePermissions,
  permissionProblem,
} from "../../../bridges/discord/permissions.ts";

const GUILD = "100000000000000001";
const BOT = "200000000000000002";
const BOT_ROLE = "300000000000000003";
const P = PermissionFlagsBits;

const client = new Client({ intents: [] });
afterAll(() => client.destroy());

type Overwrite = { id: string; type: OverwriteType; allow: bigint; deny: bigint };

let nextGuild = 1;
type Overwrites = Overwrite[] | ((guildId: string) => Overwrite[]);

function channelFor(
  everyone: bigint,
  botRole: bigint,
  given: Overwrites = [],
): { guild: Guild; channel: VoiceChannel } {
  const guildId = (BigInt(GUILD) + BigInt(nextGuild++)).toString();
  const overwrites = typeof given === "function" ? given(guildId) : given;
  const channelId = (BigInt(guildId) + 1000n).toString();
  // biome-ignore lint/suspicious/noExplicitAny: discord.js's internal cache takes raw gateway data
  const guild = (client.guilds as any)._add({
    id: guildId,
    name: "Test Server",
    owner_id: "999999999999999999",
    roles: [
      {
        id: guildId,
        name: "@everyone",
        permissions: everyone.toString(),
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
      {
        id: BOT_ROLE,
        name: "bot",
        permissions: botRole.toString(),
        position: 1,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    channels: [
      {
        id: channelId,
        type: ChannelType.GuildVoice,
        name: "Lounge",
        position: 0,
        permission_overwrites: overwrites.map((o) => ({
          id: o.id,
          type: o.type,
          allow: o.allow.toString(),
          deny: o.deny.toString(),
        })),
        bitrate: 64000,
        user_limit: 0,
      },
    ],
    members: [
      {
        user: { id: BOT, username: "agent", bot: true, discriminator: "0" },
        roles: [BOT_ROLE],
        joined_at: new Date().toISOString(),
        deaf: false,
        mute: false,
      },
    ],
    voice_states: [],
  }) as Guild;
  const channel = guild.channels.cache.get(channelId) as VoiceChannel;
  return { guild, channel };
}

function missingIn(everyone: bigint, botRole: bigint, overwrites: Overwrites = []): string[] | undefined {
  const { guild, channel } = channelFor(everyone, botRole, overwrites);
  const me = guild.members.cache.get(BOT)!;
  return missingVoicePermissions(channel.permissionsFor(me));
}

describe("voice permissions", () => {
  it("is satisfied by the role granting View Channel, Connect and Speak", () => {
    expect(missingIn(0n, P.ViewChannel | P.Connect | P.Speak)).toBeUndefined();
  });

  it("names each permission the roles do not grant", () => {
    expect(missingIn(P.ViewChannel, P.Connect)).toEqual(["Speak"]);
    expect(missingIn(0n, 0n)).toEqual(["View Channel", "Connect", "Speak"]);
  });

  it("applies the channel's overwrites: a role denied Speak there cannot speak", () => {
    const all = P.ViewChannel | P.Connect | P.Speak;
    expect(
      missingIn(0n, all, [{ id: BOT_ROLE, type: OverwriteType.Role, allow: 0n, deny: P.Speak }]),
    ).toEqual(["Speak"]);
  });

  it("applies a member overwrite that allows what @everyone's overwrite denies in the channel", () => {
    const all = P.ViewChannel | P.Connect | P.Speak;
    // @everyone's overwrite carries the guild's id.
    const everyoneDenied = (guildId: string) => [
      { id: guildId, type: OverwriteType.Role, allow: 0n, deny: P.Connect },
    ];
    expect(missingIn(all, 0n, everyoneDenied)).toEqual(["Connect"]);
    expect(
      missingIn(all, 0n, (g) => [
        ...everyoneDenied(g),
        { id: BOT, type: OverwriteType.Member, allow: P.Connect, deny: 0n },
      ]),
    ).toBeUndefined();
  });

  it("treats Administrator as every permission, overwrites or not", () => {
    expect(
      missingIn(0n, P.Administrator, [{ id: BOT_ROLE, type: OverwriteType.Role, allow: 0n, deny: P.Speak }]),
    ).toBeUndefined();
  });

  it("counts everything missing when the bot's member is unknown", () => {
    expect(missingVoicePermissions(null)).toEqual(["View Channel", "Connect", "Speak"]);
  });

  it("says in one line which channel, which server and what to grant", () => {
    const line = permissionProblem({ name: "Lounge", id: "42", guildName: "Test Server" }, [
      "Connect",
      "Speak",
    ]);
    expect(line).toContain('"Lounge" (42)');
    expect(line).toContain('"Test Server"');
    expect(line).toContain("lacks Connect, Speak");
  });

  it("computes the invite's permission integer", () => {
    // View Channel 1024 + Connect 1048576 + Speak 2097152 + Use Application Commands 2147483648
    expect(invitePermissions(false)).toBe(2150630400n);
    // + Send Messages 2048
    expect(invitePermissions(true)).toBe(2150632448n);
  });
});
