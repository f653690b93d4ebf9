// The Discord bot inside the bridge process: logs in (REST at DISCORD_API_BASE, the gateway URL from
// GET /gateway/bot), registers /join and /leave per guild, joins voice channels on command or at
// start, and runs one conversation per channel (a guild's bot is in one voice channel at a time).
// Nothing here may take the bridge down: login and permission problems are one clear log line each.
import { Client, Events, GatewayIntentBits, type Guild, type VoiceBasedChannel } from "discord.js";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport } from "../transport.ts";
import { ChannelConversation } from "./channel-conversation.ts";
import { COMMANDS, handleCommand } from "./commands.ts";
import { closeCodeProblem, loginProblem } from "./login-problems.ts";
import { missingVoicePermissions, permissionProblem } from "./permissions.ts";

/** What the bot reads of the bridge's configuration. */
export interface DiscordSettings {
  readonly token: string;
  /** Discord's REST API (the gateway URL comes from its /gateway/bot). */
  readonly apiBase: string;
  /** Voice channels joined at start, and again when a person comes into them. */
  readonly autoJoin: readonly string[];
  /** `all`: the agent answers every turn; `mention`: only turns that name it. */
  readonly respondTo: "all" | "mention";
  /** The name members call the agent by; default: the bot's user name. */
  readonly agentName?: string | undefined;
  /** Posting the conversation to the text chat (not built yet: a warning says so). */
  readonly textLog: boolean;
}

export interface DiscordBotOptions {
  settings: DiscordSettings;
  log: Logger;
  clock: Clock;
  /** A conversation began in a voice channel: run a session on it. */
  onConversation(transport: CallTransport): void;
}

export interface DiscordBot {
  readonly client: Client;
  /** Resolves true once the bot is online, false if it could not log in (the reason is logged). */
  readonly ready: Promise<boolean>;
  /** Live conversations, by guild id. */
  conversations(): ReadonlyMap<string, ChannelConversation>;
  /** Joins a voice channel by id; resolves with what happened, in a sentence. */
  join(channelId: string): Promise<string>;
  /** Ends every conversation, leaves the channels and logs out. */
  close(): Promise<void>;
}

export function startDiscordBot(opts: DiscordBotOptions): DiscordBot {
  const { settings, clock } = opts;
  const log = opts.log.child({ component: "discord" });
  if (!settings.token) throw new Error("startDiscordBot: settings.token is empty");
  if (settings.textLog)
    log.warn(
      "DISCORD_TEXT_LOG is set, but posting the conversation to the text chat is not built yet: ignored",
    );
  const intentNames = ["Guilds", "GuildVoiceStates"];
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates],
    rest: { api: settings.apiBase },
  });
  const byGuild = new Map<string, ChannelConversation>();
  const counts = new Map<string, number>();
  let closed = false;
  let reported = false;
  const report = (line: string) => {
    if (reported) return;
    reported = true;
    log.error(line);
  };

  async function joinChannel(channel: VoiceBasedChannel): Promise<string> {
    if (closed) return "The bridge is shutting down.";
    const guild = channel.guild;
    const current = byGuild.get(guild.id);
    if (current && !current.ended) {
      if (current.channel.id === channel.id) return `Already in ${channel.name}.`;
      await current.leave(`moved to ${channel.name} by /join`);
    }
    const me = guild.members.me;
    const missing = missingVoicePermissions(me ? channel.permissionsFor(me) : null);
    if (missing) {
      log.error(permissionProblem({ name: channel.name, id: channel.id, guildName: guild.name }, missing));
      return `I cannot join ${channel.name}: I lack ${missing.join(", ")} there. Ask an admin to grant them to my role.`;
    }
    const n = (counts.get(channel.id) ?? 0) + 1;
    counts.set(channel.id, n);
    const conversation = new ChannelConversation({
      client: client as Client<true>,
      channel,
      n,
      log,
      clock,
      settings: {
        respondTo: settings.respondTo,
        agentName: settings.agentName ?? client.user?.username ?? "agent",
      },
      onConversation: opts.onConversation,
      onEnded: (c) => {
        if (byGuild.get(guild.id) === c) byGuild.delete(guild.id);
      },
    });
    byGuild.set(guild.id, conversation);
    try {
      await conversation.start();
    } catch (err) {
      log.error({ channel: channel.name, guild: guild.name }, `Discord: ${(err as Error).message}`);
      return `I could not join ${channel.name}: ${(err as Error).message}.`;
    }
    return `Joined ${channel.name}. Talk to me!`;
  }

  async function join(channelId: string): Promise<string> {
    const channel = await client.channels.fetch(channelId).catch(() => null);
    if (!channel?.isVoiceBased()) {
      const line = `Discord: ${channelId} is not a voice channel the bot can see (check DISCORD_AUTO_JOIN and that the bot is in its server)`;
      log.error(line);
      return line;
    }
    return joinChannel(channel);
  }

  async function leave(guild: Guild): Promise<string> {
    const c = byGuild.get(guild.id);
    if (!c) return "I am not in a voice channel here.";
    await c.leave("left by /leave");
    return `Left ${c.channel.name}.`;
  }

  client.on(Events.Error, (err) => log.warn({ err }, "Discord client error"));
  // The gateway's own errors come with a close code, reported once by ShardDisconnect below.
  client.on(Events.ShardError, (err, shardId) => log.debug({ err, shardId }, "Discord gateway error"));
  client.on(Events.ShardDisconnect, (event, shardId) => {
    const line = closeCodeProblem(event.code, intentNames);
    if (line) report(line);
    else log.warn({ code: event.code, shardId }, "Discord gateway disconnected for good");
  });
  const register = (guild: Guild) => {
    guild.commands.set(COMMANDS).then(
      () => log.info({ guild: guild.name, guildId: guild.id }, "slash commands /join and /leave registered"),
      (err: Error) =>
        log.error(
          { guild: guild.name, err: err.message },
          `Discord: could not register /join and /leave in "${guild.name}": invite the bot with the applications.commands scope`,
        ),
    );
  };
  // Servers the bot is in at login arrive before ready (discord.js emits nothing for them); a server
  // that adds the bot later arrives as GuildCreate.
  client.on(Events.GuildCreate, register);
  client.on(Events.InteractionCreate, (i) => {
    if (!i.isChatInputCommand()) return;
    log.info({ command: i.commandName, user: i.user.username, guild: i.guild?.name }, "slash command");
    handleCommand(i, {
      join: async (guild, channelId) => {
        const channel = guild.channels.cache.get(channelId);
        return channel?.isVoiceBased() ? joinChannel(channel) : "That is not a voice channel I can see.";
      },
      leave,
    }).catch((err: Error) => log.warn({ err, command: i.commandName }, "could not answer a slash command"));
  });
  client.on(Events.VoiceStateUpdate, (before, after) => {
    // A human coming into an auto-join channel brings the agent back (it leaves emptied channels).
    if (
      after.channel &&
      after.channelId !== before.channelId &&
      settings.autoJoin.includes(after.channel.id) &&
      !after.member?.user.bot &&
      !byGuild.has(after.guild.id) &&
      !closed
    ) {
      const channel = after.channel;
      void joinChannel(channel).then((outcome) => log.info({ channel: channel.name, outcome }, "auto-join"));
    }
    const c = byGuild.get(before.guild.id);
    if (!c || c.ended || before.channelId !== c.channel.id || after.channelId === c.channel.id) return;
    if (after.id === client.user?.id) return; // our own connection handles being moved or kicked
    c.memberLeft(after.id);
  });

  const ready = new Promise<boolean>((resolve) => {
    client.once(Events.ClientReady, (c) => {
      log.info(
        { user: c.user.username, guilds: c.guilds.cache.size, shards: c.shard?.ids ?? [0] },
        "Discord bot online",
      );
      resolve(true);
      for (const guild of c.guilds.cache.values()) register(guild);
      for (const id of settings.autoJoin) void autoJoin(id);
    });
    client.on(Events.ShardDisconnect, () => {
      if (reported) resolve(false);
    });
    client.login(settings.token).catch((err: unknown) => {
      report(loginProblem(err, settings.apiBase, intentNames));
      resolve(false);
    });
  });

  async function autoJoin(channelId: string): Promise<void> {
    const channel = await client.channels.fetch(channelId).catch(() => null);
    // Under sharding every shard sees the list; each joins only channels of its own guilds.
    if (channel?.isVoiceBased() && !client.guilds.cache.has(channel.guildId)) return;
    const outcome = await join(channelId);
    log.info({ channelId, outcome }, "auto-join");
  }

  return {
    client,
    ready,
    conversations: () => byGuild,
    join,
    async close() {
      closed = true;
      for (const c of [...byGuild.values()]) await c.leave("bridge shut down");
      await client.destroy();
    },
  };
}
