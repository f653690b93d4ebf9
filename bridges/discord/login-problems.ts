// The one line the operator reads when the bot cannot get onto Discord: a refused token (REST 401
// at /gateway/bot, or gateway close 4004), an intent the application may not use (4014), and the
// other close codes after which discord.js gives up. Each names the setting to fix.

const CLOSE_CODE_PROBLEMS: Readonly<Record<number, string>> = {
  4004: "Discord refused the bot token (gateway close 4004, authentication failed): set DISCORD_TOKEN to the token under Bot → Token in the developer portal (reset it if unsure)",
  4010: "Discord: invalid shard (gateway close 4010): check DISCORD_SHARDS",
  4011: "Discord: the bot is in too many guilds for one connection (gateway close 4011, sharding required): set DISCORD_SHARDS=auto",
  4012: "Discord: invalid API version (gateway close 4012): DISCORD_API_BASE must point at an API that speaks v10",
  4013: "Discord: invalid intents (gateway close 4013): this is a bug in the bridge's intents",
};

function intentProblem(intents: readonly string[]): string {
  return `Discord refused an intent the bot asks for (gateway close 4014, disallowed intents; it asks for ${intents.join(", ")}): enable them for the application in the developer portal (Bot → Privileged Gateway Intents), or turn off DISCORD_TEXT_LOG`;
}

/**
 * The line for a gateway close code after which the bot stays offline, or undefined if discord.js
 * reconnects by itself. `intents` names the intents the bot asked for.
 */
export function closeCodeProblem(code: number, intents: readonly string[]): string | undefined {
  if (code === 4014) return intentProblem(intents);
  return CLOSE_CODE_PROBLEMS[code];
}

/** The line for a failed login (`client.login` rejected). */
export function loginProblem(err: unknown, apiBase: string, intents: readonly string[]): string {
  const e = err as { code?: unknown; status?: unknown; message?: unknown } | null;
  if (e?.code === "TokenInvalid" || e?.status === 401)
    return `Discord refused the bot token (401 from ${apiBase}): set DISCORD_TOKEN to the token under Bot → Token in the developer portal (reset it if unsure)`;
  if (e?.code === "DisallowedIntents") return intentProblem(intents);
  const why = typeof e?.message === "string" ? e.message : String(err);
  return `Discord: login failed (${why}): check DISCORD_API_BASE (${apiBase}) is reachable and DISCORD_TOKEN is the bot's token`;
}
