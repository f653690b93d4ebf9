// Discord objects the fake gateway sends, built from the fake's one guild: GUILD_CREATE (a text and a voice
// channel, the bot and the members, their voice states), users, guild members and voice states, shaped as
// discord-api-types v10 describes them.

export interface World {
  token: string;
  guildId: string;
  voiceChannelId: string;
  textChannelId: string;
  user: { id: string; username: string };
  applicationId: string;
  gatewayUrl(): string;
  /** Shard count /gateway/bot recommends. */
  shards: number;
  /** Privileged intents the application may use (bitfield); others close with 4014. */
  allowedPrivilegedIntents: number;
  members: { userId: string; name: string }[];
  /** Where each user's voice is (user id → channel id). */
  voiceChannels: Map<string, string>;
}

export function guildCreate(world: World): Record<string, unknown> {
  const people = [
    { userId: world.user.id, name: world.user.username, bot: true },
    ...world.members.map((m) => ({ ...m, bot: false })),
  ];
  return {
    id: world.guildId,
    name: "Fake Guild",
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: world.members[0]?.userId ?? world.user.id,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      {
        id: world.guildId,
        name: "@everyone",
        color: 0,
        hoist: false,
        position: 0,
        // Administrator: the fake does not model permission overwrites.
        permissions: "8",
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: world.textChannelId,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    premium_subscription_count: 0,
    preferred_locale: "en-US",
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    joined_at: new Date(0).toISOString(),
    large: false,
    unavailable: false,
    member_count: people.length,
    voice_states: people
      .filter((p) => world.voiceChannels.has(p.userId))
      .map((p) => voiceState(p.userId, world.voiceChannels.get(p.userId) ?? null, `member-${p.userId}`)),
    members: people.map((p) => member(p.userId, p.name, p.bot)),
    channels: channels(world),
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

export function channels(world: World): Record<string, unknown>[] {
  return [
    {
      id: world.textChannelId,
      type: 0,
      guild_id: world.guildId,
      name: "general",
      position: 0,
      permission_overwrites: [],
      parent_id: null,
      nsfw: false,
      topic: null,
      last_message_id: null,
      rate_limit_per_user: 0,
    },
    {
      id: world.voiceChannelId,
      type: 2,
      guild_id: world.guildId,
      name: "Voice",
      position: 1,
      permission_overwrites: [],
      parent_id: null,
      nsfw: false,
      bitrate: 64000,
      user_limit: 0,
      rtc_region: null,
      video_quality_mode: 1,
      rate_limit_per_user: 0,
      last_message_id: null,
    },
  ];
}

export function user(id: string, username: string, bot: boolean): Record<string, unknown> {
  return {
    id,
    username,
    discriminator: "0",
    global_name: username,
    avatar: null,
    bot,
    system: false,
    flags: 0,
    public_flags: 0,
    ...(bot ? { verified: true, mfa_enabled: false } : {}),
  };
}

export function member(id: string, username: string, bot: boolean): Record<string, unknown> {
  return {
    user: user(id, username, bot),
    nick: null,
    avatar: null,
    roles: [],
    joined_at: new Date(0).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
  };
}

export function voiceState(
  userId: string,
  channelId: string | null,
  sessionId: string,
): Record<string, unknown> {
  return {
    channel_id: channelId,
    user_id: userId,
    session_id: sessionId,
    deaf: false,
    mute: false,
    self_deaf: false,
    self_mute: false,
    self_stream: false,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
  };
}
