// What the fake Discord knows: the bot's application and user, guilds with their channels,
// roles and members, and who sits in which voice channel. Ids are snowflakes as strings.

export const PERMISSIONS = {
  viewChannel: 1n << 10n,
  sendMessages: 1n << 11n,
  connect: 1n << 20n,
  speak: 1n << 21n,
  useApplicationCommands: 1n << 31n,
} as const;
export const EVERYONE_ALLOWED =
  PERMISSIONS.viewChannel |
  PERMISSIONS.sendMessages |
  PERMISSIONS.connect |
  PERMISSIONS.speak |
  PERMISSIONS.useApplicationCommands;

export interface FakeUser {
  id: string;
  username: string;
  bot?: boolean;
}

export interface FakeChannel {
  id: string;
  name: string;
  /** 2 voice, 0 text. */
  type: 0 | 2;
  /** Permissions denied to the bot in this channel (an overwrite for its member). */
  denyBot?: bigint;
}

export interface FakeGuild {
  id: string;
  name: string;
  channels: FakeChannel[];
  /** Human members (the bot is added by the fake). */
  members: FakeUser[];
  /** user id → voice channel id, for members in a voice channel. */
  voice: Map<string, string>;
}

let next = 1_100_000_000_000_000_000n;
/** A fresh snowflake. */
export function snowflake(): string {
  next += 1n;
  return next.toString();
}

export function userJson(u: FakeUser) {
  return {
    id: u.id,
    username: u.username,
    discriminator: "0",
    global_name: u.username,
    avatar: null,
    ...(u.bot ? { bot: true } : {}),
  };
}

export function memberJson(u: FakeUser) {
  return {
    user: userJson(u),
    nick: null,
    roles: [],
    joined_at: "2026-01-01T00:00:00.000Z",
    deaf: false,
    mute: false,
    flags: 0,
  };
}

export function voiceStateJson(guildId: string, userId: string, channelId: string | null, sessionId: string) {
  return {
    guild_id: guildId,
    channel_id: channelId,
    user_id: userId,
    session_id: sessionId,
    deaf: false,
    mute: false,
    self_deaf: false,
    self_mute: false,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
  };
}

export function guildCreateJson(g: FakeGuild, bot: FakeUser) {
  return {
    id: g.id,
    name: g.name,
    icon: null,
    owner_id: g.members[0]?.id ?? bot.id,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    nsfw_level: 0,
    premium_tier: 0,
    preferred_locale: "en-US",
    system_channel_id: null,
    features: [],
    emojis: [],
    stickers: [],
    roles: [
      {
        id: g.id,
        name: "@everyone",
        permissions: EVERYONE_ALLOWED.toString(),
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    joined_at: "2026-01-01T00:00:00.000Z",
    large: false,
    unavailable: false,
    member_count: g.members.length + 1,
    members: [bot, ...g.members].map(memberJson),
    channels: g.channels.map((c, i) => ({
      id: c.id,
      type: c.type,
      name: c.name,
      guild_id: g.id,
      position: i,
      parent_id: null,
      permission_overwrites: c.denyBot
        ? [{ id: bot.id, type: 1, allow: "0", deny: c.denyBot.toString() }]
        : [],
      ...(c.type === 2 ? { bitrate: 64000, user_limit: 0, rtc_region: null } : { topic: null, nsfw: false }),
    })),
    voice_states: [...g.voice].map(([userId, channelId]) =>
      voiceStateJson(g.id, userId, channelId, `vs-${userId}`),
    ),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}
