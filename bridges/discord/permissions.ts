// What the bot needs in a voice channel, and one sentence naming what is missing. The channel's
// effective permissions come from discord.js (`channel.permissionsFor(me)`: @everyone, the roles,
// then the channel's overwrites, Administrator granting all), computed from the guild state the
// gateway sent, so a refusal is known before the voice connection is tried.
import { PermissionFlagsBits, PermissionsBitField } from "discord.js";

/** Permissions the bot needs to take part in a voice channel, in the order a user fixes them. */
export const VOICE_PERMISSIONS: ReadonlyArray<readonly [name: string, bit: bigint]> = [
  ["View Channel", PermissionFlagsBits.ViewChannel],
  ["Connect", PermissionFlagsBits.Connect],
  ["Speak", PermissionFlagsBits.Speak],
];

/**
 * Everything the invite asks for: the voice permissions and Use Application Commands (for /join and
 * /leave), plus Send Messages for the text log.
 */
export function invitePermissions(textLog: boolean): bigint {
  let bits = PermissionFlagsBits.UseApplicationCommands;
  for (const [, bit] of VOICE_PERMISSIONS) bits |= bit;
  if (textLog) bits |= PermissionFlagsBits.SendMessages;
  return bits;
}

/**
 * Names the voice permissions `perms` lacks, or undefined when the bot may join and speak.
 * `perms` null means discord.js could not compute them (the bot's member is not cached).
 */
export function missingVoicePermissions(
  perms: Readonly<PermissionsBitField> | bigint | null,
): string[] | undefined {
  if (perms === null) return VOICE_PERMISSIONS.map(([name]) => name);
  const field = typeof perms === "bigint" ? new PermissionsBitField(perms) : perms;
  // Administrator implies every permission (discord.js's has() checks it by default).
  const missing = VOICE_PERMISSIONS.filter(([, bit]) => !field.has(bit)).map(([name]) => name);
  return missing.length ? missing : undefined;
}

/** The one log line for a channel the bot may not use. */
export function permissionProblem(
  channel: { name: string; id: string; guildName: string },
  missing: string[],
): string {
  return `Discord: cannot use voice channel "${channel.name}" (${channel.id}) in "${channel.guildName}": the bot lacks ${missing.join(", ")} there; grant them to the bot's role (server settings → roles) or in the channel's permission overwrites`;
}
