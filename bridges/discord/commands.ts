// The slash commands: /join (the voice channel the invoking member is in) and /leave. They are
// registered per guild (those the bot is in at login, and each that adds it later): a guild's commands
// are usable at once, where global commands may take up to an hour to appear.
import {
  type ChatInputCommandInteraction,
  type Guild,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  SlashCommandBuilder,
} from "discord.js";

export const COMMANDS: RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  new SlashCommandBuilder()
    .setName("join")
    .setDescription("The voice agent joins the voice channel you are in")
    .setDMPermission(false)
    .toJSON(),
  new SlashCommandBuilder()
    .setName("leave")
    .setDescription("The voice agent leaves this server's voice channel")
    .setDMPermission(false)
    .toJSON(),
];

/** What the bot does for a command; each returns the sentence the member sees. */
export interface CommandActions {
  join(guild: Guild, channelId: string): Promise<string>;
  leave(guild: Guild): Promise<string>;
}

/** Answers one slash command, ephemerally (only the member who asked sees it). */
export async function handleCommand(i: ChatInputCommandInteraction, actions: CommandActions): Promise<void> {
  const guild = i.guild;
  if (!guild) {
    await i.reply({
      content: "This command works in a server, not in direct messages.",
      flags: MessageFlags.Ephemeral,
    });
    return;
  }
  if (i.commandName === "join") {
    const member = guild.members.cache.get(i.user.id);
    const channelId = member?.voice.channelId ?? guild.voiceStates.cache.get(i.user.id)?.channelId;
    if (!channelId) {
      await i.reply({
        content: "Join a voice channel first, then run /join.",
        flags: MessageFlags.Ephemeral,
      });
      return;
    }
    // Joining (voice handshake, DAVE) can outlast the 3 s Discord gives a first reply.
    await i.deferReply({ flags: MessageFlags.Ephemeral });
    await i.editReply(await actions.join(guild, channelId));
    return;
  }
  if (i.commandName === "leave") {
    await i.reply({ content: await actions.leave(guild), flags: MessageFlags.Ephemeral });
    return;
  }
  await i.reply({ content: `Unknown command /${i.commandName}.`, flags: MessageFlags.Ephemeral });
}
